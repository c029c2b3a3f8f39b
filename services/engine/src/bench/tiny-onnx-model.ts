/**
 * Builds small ONNX models as protobuf bytes, so tests and the benchmark need no model files and no
 * protobuf library. Supports one binary operator (Add, Mul, MatMul) over float tensors.
 */

const varint = (value: number): number[] => {
  const bytes: number[] = [];
  let rest = value;
  while (rest > 0x7f) {
    bytes.push((rest & 0x7f) | 0x80);
    rest = Math.floor(rest / 128);
  }
  bytes.push(rest);
  return bytes;
};

const fieldVarint = (field: number, value: number): number[] => [...varint(field << 3), ...varint(value)];

const fieldBytes = (field: number, payload: number[] | string): number[] => {
  const bytes = typeof payload === 'string' ? [...Buffer.from(payload, 'utf8')] : payload;
  return [...varint((field << 3) | 2), ...varint(bytes.length), ...bytes];
};

const FLOAT = 1;

/** ValueInfoProto of a float tensor; a string dimension is symbolic (any size). */
const tensorInfo = (name: string, dims: (number | string)[]): number[] => {
  const shape = dims.flatMap((dim) =>
    fieldBytes(1, typeof dim === 'number' ? fieldVarint(1, dim) : fieldBytes(2, dim)),
  );
  const tensorType = [...fieldVarint(1, FLOAT), ...fieldBytes(2, shape)];
  return [...fieldBytes(1, name), ...fieldBytes(2, fieldBytes(1, tensorType))];
};

export interface TinyModelSpec {
  op: 'Add' | 'Mul' | 'MatMul';
  /** Input names and dims (two inputs). */
  inputs: [{ name: string; dims: (number | string)[] }, { name: string; dims: (number | string)[] }];
  output: { name: string; dims: (number | string)[] };
}

/** An ONNX model (IR 8, opset 13) computing `output = op(inputs[0], inputs[1])`. */
export function tinyOnnxModel(spec: TinyModelSpec): Uint8Array {
  const node = [
    ...fieldBytes(1, spec.inputs[0].name),
    ...fieldBytes(1, spec.inputs[1].name),
    ...fieldBytes(2, spec.output.name),
    ...fieldBytes(4, spec.op),
  ];
  const graph = [
    ...fieldBytes(1, node),
    ...fieldBytes(2, 'tiny'),
    ...spec.inputs.flatMap((input) => fieldBytes(11, tensorInfo(input.name, input.dims))),
    ...fieldBytes(12, tensorInfo(spec.output.name, spec.output.dims)),
  ];
  const model = [...fieldVarint(1, 8), ...fieldBytes(7, graph), ...fieldBytes(8, fieldVarint(2, 13))];
  return Uint8Array.from(model);
}

/** `sum = a + b` over float vectors of any length: the model tests and the benchmark run. */
export const addModel = (): Uint8Array =>
  tinyOnnxModel({
    op: 'Add',
    inputs: [
      { name: 'a', dims: ['n'] },
      { name: 'b', dims: ['n'] },
    ],
    output: { name: 'sum', dims: ['n'] },
  });
