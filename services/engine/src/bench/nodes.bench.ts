/**
 * Node palette benchmark: what each heavy node costs on its own, called through its executor as
 * the engine calls it (no event store, no bus). One section per node; `--only=<section>` runs one.
 * Prints tables; asserts nothing. Run: pnpm bench nodes [--only=script|schematization|onnx|openai|browser|ocr] [--quick]
 */
import { createServer } from 'node:http';
import ivm from 'isolated-vm';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { DecryptedConnection } from '@weft/contracts';
import type { DataBlockSchemas } from '../adapters/nodes/data-block-schemas.js';
import { createNodePalette, type NodePalette } from '../adapters/nodes/node-palette.js';
import { createFrozenRealm } from '../adapters/nodes/frozen-realm.js';
import { ScriptSandbox } from '../adapters/nodes/script-sandbox.js';
import type { NodeRunContext } from '../domain/nodes/node-executor.js';
import { ms, percentile, printTable } from './latency-stats.js';
import { addModel } from './tiny-onnx-model.js';

const args = process.argv.slice(2);
const quick = args.includes('--quick');
const only = args.find((arg) => arg.startsWith('--only='))?.slice('--only='.length);
const RUNS = quick ? 200 : 2000;

const sorted = (values: number[]): number[] => [...values].sort((a, b) => a - b);

const contextFor = (type: string, connections: Record<string, DecryptedConnection> = {}): NodeRunContext => ({
  executionId: 'bench',
  processId: 'bench',
  organizationId: 'bench-org',
  node: { id: 'bench-node', type, label: 'Bench', config: {} },
  signal: new AbortController().signal,
  now: () => new Date(),
  firstStartedAt: new Date(),
  runKey: 'bench-node',
  triggerData: {},
  triggerNodeId: 'in',
  sleepUntil: () => Promise.resolve(),
  connection: async (id) => connections[id] as DecryptedConnection,
  runLoopBody: () => Promise.resolve({}),
});

async function timed(runs: number, once: () => Promise<unknown>): Promise<number[]> {
  const durations: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    await once();
    durations.push(performance.now() - started);
  }
  return sorted(durations);
}

// ---- scriptNode: the sandbox at concurrency (one organization, so one isolate) ----
/**
 * Runs/s, latency and CPU per run (all threads of this process: the isolate runs on its own) of
 * the script sandbox as the benchmark process's script nodes use it, and what a new isolate with
 * its frozen realm costs (once per organization, docs/decisions/0006).
 */
async function script(): Promise<void> {
  const sandbox = new ScriptSandbox();
  const run = () =>
    sandbox.run({
      organizationId: 'bench-org',
      code: 'return { total: input.In.amount * 0.9 };',
      input: { In: { id: 1, amount: 150, customer: 'bench' } },
      timeoutMs: 5000,
      memoryMb: 128,
    });
  for (let i = 0; i < 200; i++) await run();
  const seconds = quick ? 1 : 3;
  const rows: string[][] = [];
  for (const concurrency of [1, 10, 50]) {
    const durations: number[] = [];
    const started = performance.now();
    const cpu = process.cpuUsage();
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (performance.now() - started < seconds * 1000) {
          const at = performance.now();
          await run();
          durations.push(performance.now() - at);
        }
      }),
    );
    const elapsed = (performance.now() - started) / 1000;
    const used = process.cpuUsage(cpu);
    const runs = sorted(durations);
    rows.push([
      String(concurrency),
      (runs.length / elapsed).toFixed(0),
      ms(percentile(runs, 0.5)),
      ms(percentile(runs, 0.99)),
      ms((used.user + used.system) / 1000 / runs.length),
    ]);
  }
  sandbox.dispose();
  // The realm's one-time cost, paid by an organization's first run and after its isolate is reset.
  const realms = quick ? 3 : 10;
  const realmCpu = process.cpuUsage();
  const realmStarted = performance.now();
  for (let i = 0; i < realms; i++) {
    const isolate = new ivm.Isolate({ memoryLimit: 128 });
    await createFrozenRealm(isolate);
    isolate.dispose();
  }
  const realmUsed = process.cpuUsage(realmCpu);
  rows.push([
    'new isolate + frozen realm',
    '',
    ms((performance.now() - realmStarted) / realms),
    '',
    ms((realmUsed.user + realmUsed.system) / 1000 / realms),
  ]);
  printTable(
    'scriptNode sandbox: one organization, `return { total: input.In.amount * 0.9 }`, runs sharing its frozen realm',
    ['concurrency', 'runs/s', 'p50', 'p99', 'CPU per run'],
    rows,
  );
}

// ---- schematizationNode (mapping mode): latency per block ----
async function schematization(): Promise<void> {
  const blockSchema = {
    type: 'object',
    properties: { number: { type: 'string' }, total: { type: 'number' }, lines: { type: 'array' } },
    required: ['number', 'total'],
  };
  const names = ['b1', 'b2', 'b3', 'b4', 'b5'];
  const dataBlocks: DataBlockSchemas = {
    blocksOf: async (_org, _schema, wanted) => wanted.map((name) => ({ name, jsonSchema: blockSchema })),
  };
  const palette = createNodePalette({ dataBlocks });
  const executor = palette.executors.get('schematizationNode')!;
  const input = {
    In: { ref: 'INV-1', lines: Array.from({ length: 20 }, (_, i) => ({ sku: `s${i}`, amount: i * 1.5 })) },
  };
  const expression = '{ "number": In.ref, "total": $sum(In.lines.amount), "lines": In.lines[amount > 10].sku }';
  const rows: string[][] = [];
  for (const count of [1, 5]) {
    const config = {
      label: 'Extract',
      schemaId: 's',
      mode: 'mapping',
      selectedDataBlocks: names.slice(0, count),
      mappings: Object.fromEntries(names.slice(0, count).map((name) => [name, expression])),
    };
    const context = contextFor('schematizationNode');
    await timed(20, () => executor.execute(config, input, context));
    const durations = await timed(RUNS, () => executor.execute(config, input, context));
    const p50 = percentile(durations, 0.5);
    rows.push([String(count), ms(p50), ms(percentile(durations, 0.99)), ms(p50 / count)]);
  }
  await palette.close();
  printTable(
    'schematizationNode, mapping mode (JSONata + ajv per block, 20-line input, schemas in memory)',
    ['blocks', 'p50 per node', 'p99 per node', 'p50 per block'],
    rows,
  );
}

// ---- mlModelNode (onnx): model load, inferences/s sequential and concurrent ----
async function onnx(): Promise<void> {
  const palette: NodePalette = createNodePalette();
  const executor = palette.executors.get('mlModelNode')!;
  const rows: string[][] = [];
  for (const size of [16, 4096]) {
    const model = `data:application/octet-stream;base64,${Buffer.from(addModel()).toString('base64')}`;
    const values = Array.from({ length: size }, (_, i) => i / 7);
    const config = {
      label: 'Add',
      provider: 'onnx',
      model,
      inputs: { a: { data: values, dims: [size] }, b: { data: values, dims: [size] } },
    };
    const context = contextFor('mlModelNode');
    const first = await timed(1, () => executor.execute(config, {}, context));
    const durations = await timed(RUNS, () => executor.execute(config, {}, context));
    const sequentialPerSecond = RUNS / (durations.reduce((sum, value) => sum + value, 0) / 1000);
    const concurrency = 8;
    const started = performance.now();
    let left = RUNS;
    await Promise.all(
      Array.from({ length: concurrency }, async () => {
        while (left-- > 0) await executor.execute(config, {}, context);
      }),
    );
    const concurrentPerSecond = RUNS / ((performance.now() - started) / 1000);
    rows.push([
      `Add, ${size} floats`,
      ms(first[0] ?? 0),
      ms(percentile(durations, 0.5)),
      ms(percentile(durations, 0.99)),
      sequentialPerSecond.toFixed(0),
      concurrentPerSecond.toFixed(0),
    ]);
  }
  await palette.close();
  printTable(
    'mlModelNode, onnx provider (worker thread; the first run loads the model, later rows and runs reuse it)',
    ['model', 'first run', 'p50', 'p99', 'inferences/s (1 at a time)', 'inferences/s (8 at once)'],
    rows,
  );
}

// ---- mlModelNode (openai): round trip to an OpenAI-compatible server on loopback ----
async function openai(): Promise<void> {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          choices: [{ message: { role: 'assistant', content: 'ok' } }],
          usage: { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  const palette = createNodePalette();
  const executor = palette.executors.get('mlModelNode')!;
  const connection: DecryptedConnection = {
    id: 'llm',
    organizationId: 'bench-org',
    type: 'llm',
    name: 'bench',
    data: { baseUrl, apiKey: 'k', model: 'm' },
  };
  const context = contextFor('mlModelNode', { llm: connection });
  const config = {
    label: 'Chat',
    provider: 'openai',
    connectionId: 'llm',
    operation: 'chat',
    messages: [{ role: 'user', content: 'hi' }],
  };
  await timed(20, () => executor.execute(config, {}, context));
  const durations = await timed(RUNS, () => executor.execute(config, {}, context));
  await palette.close();
  await new Promise((resolve) => server.close(resolve));
  printTable(
    'mlModelNode, openai provider (chat against an instant server on loopback: the engine side only)',
    ['calls', 'p50', 'p99'],
    [[String(RUNS), ms(percentile(durations, 0.5)), ms(percentile(durations, 0.99))]],
  );
}

// ---- webAutomationNode and ocrNode: browser steps/s, OCR pages/s (pages made by the browser) ----
const TEXT_PAGE = (pages: number): string =>
  Array.from(
    { length: pages },
    (_, i) =>
      `<section style="page-break-after:always;font:28px sans-serif;padding:40px">` +
      `<h1 id="t${i}">Invoice ${1000 + i}</h1><p>Total due 4711.00 EUR</p><p>Payable within 30 days</p></section>`,
  ).join('');

async function withPageServer<T>(work: (url: string) => Promise<T>): Promise<T> {
  const server = createServer((req, res) => {
    const pages = Number(new URL(req.url ?? '/', 'http://x').searchParams.get('pages') ?? 1);
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(
      `<form><input id="q"><button id="b" type="button" onclick="this.textContent='done'">go</button></form>${TEXT_PAGE(pages)}`,
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    return await work(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
}

const fileBytes = (file: { url: string }): Buffer => Buffer.from(file.url.split(',')[1] ?? '', 'base64');

async function browser(): Promise<void> {
  const runs = quick ? 10 : 50;
  await withPageServer(async (url) => {
    const palette = createNodePalette();
    const executor = palette.executors.get('webAutomationNode')!;
    const context = contextFor('webAutomationNode');
    const steps = [
      { action: 'goto', url },
      { action: 'fill', selector: '#q', value: 'weft' },
      { action: 'click', selector: '#b' },
      { action: 'waitFor', selector: '#t0' },
      { action: 'extractText', selector: '#t0', name: 'title' },
      { action: 'extractAttribute', selector: '#q', attribute: 'id', name: 'id' },
    ];
    const config = { label: 'Browse', allowedHosts: ['127.0.0.1'], steps };
    const first = await timed(1, () => executor.execute(config, {}, context));
    const durations = await timed(runs, () => executor.execute(config, {}, context));
    const total = durations.reduce((sum, value) => sum + value, 0);
    const shot = await timed(runs, () =>
      executor.execute({ label: 'Shot', steps: [{ action: 'goto', url }, { action: 'screenshot' }] }, {}, context),
    );
    await palette.close();
    printTable(
      'webAutomationNode (system Chromium; one browser per engine, a fresh context per run; page on loopback)',
      ['run', 'first run (launch)', 'p50 per run', 'p99 per run', 'steps/s (incl. new context)'],
      [
        [
          `${steps.length} steps`,
          ms(first[0] ?? 0),
          ms(percentile(durations, 0.5)),
          ms(percentile(durations, 0.99)),
          ((runs * steps.length) / (total / 1000)).toFixed(0),
        ],
        ['goto + screenshot', '', ms(percentile(shot, 0.5)), ms(percentile(shot, 0.99)), ''],
      ],
    );
  });
}

async function ocr(): Promise<void> {
  const runs = quick ? 5 : 20;
  await withPageServer(async (url) => {
    const palette = createNodePalette();
    const browse = palette.executors.get('webAutomationNode')!;
    const context = contextFor('ocrNode');
    const made = (await browse.execute(
      {
        label: 'Make',
        steps: [
          { action: 'goto', url: `${url}?pages=1` },
          { action: 'screenshot', name: 'page.png' },
          { action: 'goto', url: `${url}?pages=4` },
          { action: 'pdf', name: 'doc.pdf' },
        ],
      },
      {},
      context,
    )) as { output: { files: { name: string; url: string; size: number; contentType: string }[] } };
    const [png, pdf] = made.output.files as unknown as [{ url: string }, { url: string }];
    const executor = palette.executors.get('ocrNode')!;
    const first = await timed(1, () => executor.execute({ label: 'Scan', file: png }, {}, context));
    const images = await timed(runs, () => executor.execute({ label: 'Scan', file: png }, {}, context));
    const pdfRuns = await timed(Math.max(2, runs / 4), () =>
      executor.execute({ label: 'Scan', file: pdf }, {}, context),
    );
    const pdfPages = 4;
    await palette.close();
    const perSecond = (durations: number[], pages: number): string =>
      ((durations.length * pages) / (durations.reduce((sum, value) => sum + value, 0) / 1000)).toFixed(1);
    printTable(
      'ocrNode (tesseract.js, eng, 1 worker; pages made by Chromium)',
      ['input', 'first run (worker start)', 'p50 per node', 'p99 per node', 'pages/s'],
      [
        [
          `PNG ${(fileBytes(png).byteLength / 1024).toFixed(0)} KiB, 1280x720`,
          ms(first[0] ?? 0),
          ms(percentile(images, 0.5)),
          ms(percentile(images, 0.99)),
          perSecond(images, 1),
        ],
        [
          `PDF, ${pdfPages} pages (pdftoppm 200 dpi)`,
          '',
          ms(percentile(pdfRuns, 0.5)),
          ms(percentile(pdfRuns, 0.99)),
          perSecond(pdfRuns, pdfPages),
        ],
      ],
    );
  });
}

const sections: Record<string, () => Promise<void>> = { script, schematization, onnx, openai, browser, ocr };

for (const [name, section] of Object.entries(sections)) {
  if (only && only !== name) continue;
  await section();
}
