import { OnnxModelFormatError, usesExternalData } from '../src/adapters/nodes/onnx-external-data.js';
import { addModel, externalDataModel } from '../src/bench/tiny-onnx-model.js';

describe('usesExternalData', () => {
  test('a model with every tensor inside it passes', () => {
    expect(usesExternalData(addModel())).toBe(false);
  });

  test('an initializer or a node attribute naming an external file is found', () => {
    expect(usesExternalData(externalDataModel('.weft/secret-key'))).toBe(true);
    expect(usesExternalData(externalDataModel('.weft/secret-key', { nested: true }))).toBe(true);
  });

  test('bytes that are not protobuf are a format error, not a pass', () => {
    expect(() => usesExternalData(Buffer.from('not a model'))).toThrow(OnnxModelFormatError);
    expect(() => usesExternalData(addModel().subarray(0, 20))).toThrow(OnnxModelFormatError);
  });
});
