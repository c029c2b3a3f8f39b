/**
 * The ONNX worker thread's code (CommonJS, run with `eval`, so it needs no file next to the build).
 * It loads onnxruntime-node with Node's own require, keeps one session per model key and answers
 * `load`, `run`, `release` and `sessions` messages by id. Tensors cross as plain arrays.
 *
 * Every session is created with the runtime's external data folder set to `workerData.emptyDir`,
 * an empty directory: a model loaded from bytes otherwise resolves the files its tensors name
 * against the working directory (the engine's data dir), so a model the external-data check
 * missed could read them. The runtime refuses absolute and `..` locations itself; in the empty
 * directory every other location does not exist. `load_model_format: ONNX` keeps the runtime from
 * taking the bytes as an ORT-format model, which that check does not read.
 */
export const ONNX_WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
let ort;
try {
  ort = require(workerData.runtimePath);
} catch (error) {
  parentPort.postMessage({ fatal: true, code: error.code, message: String(error.message) });
}
if (ort && !workerData.emptyDir) {
  ort = undefined;
  parentPort.postMessage({ fatal: true, message: 'no empty directory for external data' });
}
const SESSION_OPTIONS = {
  extra: { session: { model_external_initializers_file_folder_path: workerData.emptyDir, load_model_format: 'ONNX' } },
};
const sessions = new Map();
// Sessions created and not released (tests observe it: a session left out of \`sessions\` leaks).
let live = 0;
// Loads and releases of one model key run one after the other: a release (an eviction) that
// arrives while its model is still loading waits for the load, then releases what it made; a
// second load of a model still loading waits and shares the session.
const queues = new Map();
const inTurn = (key, step) => {
  const done = (queues.get(key) ?? Promise.resolve()).then(step);
  const settled = done.then(() => undefined, () => undefined);
  queues.set(key, settled);
  void settled.then(() => {
    if (queues.get(key) === settled) queues.delete(key);
  });
  return done;
};
const release = async (session) => {
  live -= 1;
  await session.release();
};
// Runs in progress per session: a release (an eviction) while one awaits its inference waits for
// it, or the runtime would dispose of the session under it.
const running = new Map();
const releasing = new Set();
const releaseWhenIdle = async (session) => {
  if ((running.get(session) ?? 0) > 0) return void releasing.add(session);
  await release(session);
};
const plain = (value) =>
  typeof value === 'bigint'
    ? value <= BigInt(Number.MAX_SAFE_INTEGER) && value >= BigInt(Number.MIN_SAFE_INTEGER) ? Number(value) : value.toString()
    : value;
const tensorOf = (spec) =>
  new ort.Tensor(spec.type, spec.type === 'int64' ? BigInt64Array.from(spec.data) : spec.data, spec.dims);
if (ort) parentPort.on('message', async (message) => {
  try {
    if (message.op === 'load') {
      const session = await inTurn(message.key, async () => {
        if (!sessions.has(message.key)) {
          sessions.set(message.key, await ort.InferenceSession.create(message.bytes, SESSION_OPTIONS));
          live += 1;
        }
        return sessions.get(message.key);
      });
      parentPort.postMessage({ id: message.id, result: { inputNames: session.inputNames, outputNames: session.outputNames } });
    } else if (message.op === 'run') {
      const session = sessions.get(message.key);
      if (!session) return void parentPort.postMessage({ id: message.id, evicted: true });
      const feeds = {};
      for (const [name, spec] of Object.entries(message.feeds)) feeds[name] = tensorOf(spec);
      running.set(session, (running.get(session) ?? 0) + 1);
      let results;
      try {
        results = await session.run(feeds);
      } finally {
        const left = running.get(session) - 1;
        if (left > 0) running.set(session, left);
        else {
          running.delete(session);
          if (releasing.delete(session)) await release(session);
        }
      }
      // A model may turn a small input into a huge output (a broadcast, an Expand): refuse it
      // before it is copied into JS arrays, which take several times the runtime's bytes.
      let values = 0;
      for (const tensor of Object.values(results)) values += tensor.size;
      if (values > workerData.maxOutputValues) {
        for (const tensor of Object.values(results)) tensor.dispose?.();
        throw new Error('the model returned ' + values + ' values, more than the ' + workerData.maxOutputValues +
          ' an ONNX run may return (WEFT_ONNX_MAX_OUTPUT_VALUES)');
      }
      const outputs = {};
      for (const [name, tensor] of Object.entries(results)) {
        outputs[name] = { data: Array.from(tensor.data, plain), dims: Array.from(tensor.dims) };
      }
      parentPort.postMessage({ id: message.id, result: outputs });
    } else if (message.op === 'release') {
      await inTurn(message.key, async () => {
        const session = sessions.get(message.key);
        sessions.delete(message.key);
        if (session) await releaseWhenIdle(session);
      });
      parentPort.postMessage({ id: message.id, result: null });
    } else if (message.op === 'sessions') {
      parentPort.postMessage({ id: message.id, result: { keys: [...sessions.keys()], live } });
    }
  } catch (error) {
    parentPort.postMessage({ id: message.id, error: String(error && error.message ? error.message : error) });
  }
});
if (ort) parentPort.postMessage({ ready: true });
`;
