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

/** TensorProto of a float vector whose data lives in the file `location` (ONNX "external data"). */
const externalTensor = (name: string, length: number, location: string): number[] => [
  ...fieldVarint(1, length),
  ...fieldVarint(2, FLOAT),
  ...fieldBytes(8, name),
  ...fieldBytes(13, [...fieldBytes(1, 'location'), ...fieldBytes(2, location)]),
  ...fieldVarint(14, 1),
];

/**
 * `sum = a + b` where `b` is an initializer kept in the external file `location`, the way a model
 * could ask the runtime to read a file of the engine's disk. `nested` puts it inside a Constant
 * node's tensor attribute instead of the graph's initializers.
 */
export function externalDataModel(location: string, options: { nested?: boolean } = {}): Uint8Array {
  const weights = externalTensor('b', 4, location);
  const add = [...fieldBytes(1, 'a'), ...fieldBytes(1, 'b'), ...fieldBytes(2, 'sum'), ...fieldBytes(4, 'Add')];
  // A Constant node: output "b", attribute "value" (AttributeProto name = 1, t = 5, type TENSOR = 4).
  const constant = [
    ...fieldBytes(2, 'b'),
    ...fieldBytes(4, 'Constant'),
    ...fieldBytes(5, [...fieldBytes(1, 'value'), ...fieldBytes(5, weights), ...fieldVarint(20, 4)]),
  ];
  const graph = [
    ...(options.nested ? fieldBytes(1, constant) : []),
    ...fieldBytes(1, add),
    ...fieldBytes(2, 'external'),
    ...(options.nested ? [] : fieldBytes(5, weights)),
    ...fieldBytes(11, tensorInfo('a', [4])),
    ...fieldBytes(12, tensorInfo('sum', [4])),
  ];
  return Uint8Array.from([...fieldVarint(1, 8), ...fieldBytes(7, graph), ...fieldBytes(8, fieldVarint(2, 13))]);
}
