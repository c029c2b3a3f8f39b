import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { OnnxModels } from '../src/adapters/nodes/onnx-models.js';
import { externalDataModel } from '../src/bench/tiny-onnx-model.js';

// The external-data check is switched off here, as if a model got past it: the worker itself must
// then keep the runtime from reading the engine's files.
jest.mock('../src/adapters/nodes/onnx-external-data.js', () => ({
  ...jest.requireActual('../src/adapters/nodes/onnx-external-data.js'),
  usesExternalData: () => false,
}));

const dataUrl = (model: Uint8Array): string =>
  `data:application/octet-stream;base64,${Buffer.from(model).toString('base64')}`;

describe('ONNX worker: a model with external data past the check', () => {
  test('fails to load without reading the file it names: the runtime looks in an empty directory', async () => {
    // package.json is in the working directory: a session created from the bytes without the empty
    // directory reads its first 16 bytes as `b` (the model also lists `b` as an input, so no graph
    // optimization touches it before the session reads it) and the run returns them.
    expect(readFileSync(join(process.cwd(), 'package.json')).length).toBeGreaterThanOrEqual(16);
    const here = process.cwd();
    const models = new OnnxModels({ maxModelBytes: 1024 * 1024, maxCachedModels: 4, maxOutputValues: 1000 });
    const attempt = async (location: string): Promise<string> => {
      try {
        const loaded = await models.load('org', dataUrl(externalDataModel(location, { asInput: true })));
        const outputs = await models.run(loaded, { a: { type: 'float32', data: [0, 0, 0, 0], dims: [4] } });
        return `the model read the file: ${JSON.stringify(outputs)}`;
      } catch (error) {
        return (error as Error).message;
      }
    };
    let emptyDir: string | undefined;
    try {
      const relative = await attempt('package.json');
      expect(relative).toMatch(/^the model could not be loaded: External data path validation failed/);
      emptyDir = /External data path does not exist: "(\/[^"]*weft-onnx-no-external-data-[^/"]*)\/package\.json"/.exec(
        relative,
      )?.[1];
      expect(emptyDir).toBeDefined();
      expect(readdirSync(emptyDir as string)).toEqual([]);
      // Out of the empty directory: the runtime refuses absolute and escaping locations itself.
      expect(await attempt(join(here, 'package.json'))).toMatch(/Absolute path not allowed for external data location/);
      expect(await attempt(`../${basename(here)}/package.json`)).toMatch(/External data path escapes model directory/);
      expect(await models.workerSessions()).toEqual({ keys: [], live: 0 });
    } finally {
      await models.close();
    }
    expect(existsSync(emptyDir as string)).toBe(false);
  });
});
