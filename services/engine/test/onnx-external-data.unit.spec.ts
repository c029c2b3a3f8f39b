import { OnnxModelFormatError, usesExternalData } from '../src/adapters/nodes/onnx-external-data.js';
import {
  addModel,
  externalDataModel,
  externalTensor,
  onnxWire,
  trainingInfoModel,
} from '../src/bench/tiny-onnx-model.js';

const { varint, tag, fieldVarint, fieldBytes, tensorInfo } = onnxWire;

/** A model whose graph holds one initializer made of the given TensorProto fields. */
const withInitializer = (tensor: number[]): Uint8Array =>
  Uint8Array.from([
    ...fieldVarint(1, 8),
    ...fieldBytes(7, [...fieldBytes(2, 'g'), ...fieldBytes(5, tensor), ...fieldBytes(12, tensorInfo('b', [4]))]),
    ...fieldBytes(8, fieldVarint(2, 13)),
  ]);

/** A float vector tensor "b" of 4 values with the given extra fields (no data of its own). */
const tensorWith = (...fields: number[][]): number[] => [
  ...fieldVarint(1, 4),
  ...fieldVarint(2, 1),
  ...fieldBytes(8, 'b'),
  ...fields.flat(),
];
/** A StringStringEntryProto of external_data: location = package.json. */
const entry = [...fieldBytes(1, 'location'), ...fieldBytes(2, 'package.json')];

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

  test('a field tag beyond 32 bits is refused: protobuf truncates it, "2^29 + 13" is field 13 to the runtime', () => {
    const tooLong = /the model has a protobuf field tag longer than 32 bits/;
    // external_data (13) and data_location (14) under tags the runtime reads as 13 and 14: five
    // bytes with a value of 2^32 and more, and longer varints.
    for (const high of [2 ** 29, 2 ** 32]) {
      const external = [...tag(13 + high, 2), ...varint(entry.length), ...entry];
      const where = [...tag(14 + high, 0), ...varint(1)];
      expect(() => usesExternalData(withInitializer(tensorWith(external, where)))).toThrow(tooLong);
    }
    // Anywhere in the model, not only in tensors.
    const model = [...addModel(), ...tag(7 + 2 ** 29, 2), ...varint(0)];
    expect(() => usesExternalData(Uint8Array.from(model))).toThrow(OnnxModelFormatError);
    // A tag padded to five bytes but below 2^32 is the field it says: data_location = EXTERNAL.
    const padded = [0x80 | (14 * 8), 0x80, 0x80, 0x80, 0x00, ...varint(1)];
    expect(usesExternalData(withInitializer(tensorWith(padded)))).toBe(true);
  });

  test('a length varint longer than 5 bytes or beyond 2^31 is refused, as protobuf refuses it', () => {
    const overlong = [...tag(8, 2), 0x81, 0x80, 0x80, 0x80, 0x80, 0x00, 0x62];
    expect(() => usesExternalData(withInitializer(tensorWith(overlong)))).toThrow(
      /the model has a protobuf length longer than 5 bytes or beyond 2 GiB/,
    );
  });

  test('any data_location but DEFAULT counts as external: the runtime cuts the enum to 32 bits', () => {
    // 2^32 + 1 is EXTERNAL (1) to the runtime; with no external_data entry at all.
    for (const value of [1, 2, 2 ** 32 + 1, 2 ** 40]) {
      expect(usesExternalData(withInitializer(tensorWith(fieldVarint(14, value))))).toBe(true);
    }
    expect(usesExternalData(withInitializer(tensorWith(fieldVarint(14, 0))))).toBe(false);
  });

  test('external_data and data_location count in any wire type', () => {
    expect(usesExternalData(withInitializer(tensorWith(fieldVarint(13, 1))))).toBe(true);
    expect(usesExternalData(withInitializer(tensorWith(fieldBytes(14, [1]))))).toBe(true);
    expect(usesExternalData(withInitializer(tensorWith([...tag(14, 5), 1, 0, 0, 0])))).toBe(true);
    expect(usesExternalData(withInitializer(tensorWith([...tag(14, 1), 1, 0, 0, 0, 0, 0, 0, 0])))).toBe(true);
  });

  test("a function's attribute default (FunctionProto.attribute_proto) naming an external file is found", () => {
    const attribute = [
      ...fieldBytes(1, 'w'),
      ...fieldBytes(5, externalTensor('w', 4, 'package.json')),
      ...fieldVarint(20, 4),
    ];
    const fn = [...fieldBytes(1, 'f'), ...fieldBytes(10, 'custom'), ...fieldBytes(11, attribute)];
    expect(usesExternalData(Uint8Array.from([...addModel(), ...fieldBytes(25, fn)]))).toBe(true);
  });

  test('training info: its two graphs are walked, its binding maps are not taken for graphs', () => {
    expect(usesExternalData(trainingInfoModel())).toBe(false);
    expect(usesExternalData(trainingInfoModel({ external: 'initialization' }))).toBe(true);
    expect(usesExternalData(trainingInfoModel({ external: 'algorithm' }))).toBe(true);
  });
});
