/**
 * Builds small ONNX models as protobuf bytes, so tests and the benchmark need no model files and no
 * protobuf library. Supports one binary operator (Add, Mul, MatMul) over float tensors.
 */

const varint = (value: number): number[] => {
  const bytes: number[] = [];
  let rest = value;
  while (rest > 0x7f) {
    bytes.push((rest % 128) | 0x80);
    rest = Math.floor(rest / 128);
  }
  bytes.push(rest);
  return bytes;
};

/** A field's tag: its number and wire type (0 varint, 2 length-delimited). */
const tag = (field: number, wireType: number): number[] => varint(field * 8 + wireType);

const fieldVarint = (field: number, value: number): number[] => [...tag(field, 0), ...varint(value)];

const fieldBytes = (field: number, payload: number[] | string): number[] => {
  const bytes = typeof payload === 'string' ? [...Buffer.from(payload, 'utf8')] : payload;
  return [...tag(field, 2), ...varint(bytes.length), ...bytes];
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

/** The protobuf writers above, for tests that build malformed or unusual models. */
export const onnxWire = { varint, tag, fieldVarint, fieldBytes, tensorInfo };

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
export const externalTensor = (name: string, length: number, location: string): number[] => [
  ...fieldVarint(1, length),
  ...fieldVarint(2, FLOAT),
  ...fieldBytes(8, name),
  ...fieldBytes(13, [...fieldBytes(1, 'location'), ...fieldBytes(2, location)]),
  ...fieldVarint(14, 1),
];

/** The `sum = a + b` graph over float vectors of length 4, with `b` given by `extra` graph fields. */
const addGraph = (name: string, extra: { before?: number[]; after?: number[] } = {}): number[] => {
  const add = [...fieldBytes(1, 'a'), ...fieldBytes(1, 'b'), ...fieldBytes(2, 'sum'), ...fieldBytes(4, 'Add')];
  return [
    ...(extra.before ?? []),
    ...fieldBytes(1, add),
    ...fieldBytes(2, name),
    ...(extra.after ?? []),
    ...fieldBytes(11, tensorInfo('a', [4])),
    ...fieldBytes(12, tensorInfo('sum', [4])),
  ];
};

/** ModelProto (IR 8, opset 13) around `graph`, followed by `extra` model fields. */
const modelOf = (graph: number[], extra: number[] = []): Uint8Array =>
  Uint8Array.from([...fieldVarint(1, 8), ...fieldBytes(7, graph), ...fieldBytes(8, fieldVarint(2, 13)), ...extra]);

/**
 * `sum = a + b` where `b` is an initializer kept in the external file `location`, the way a model
 * could ask the runtime to read a file of the engine's disk. `nested` puts it inside a Constant
 * node's tensor attribute instead of the graph's initializers. `asInput` also lists `b` among the
 * graph's inputs (an initializer that is a default value): no graph optimization touches it, so
 * the runtime reads the file when the session is created.
 */
export function externalDataModel(location: string, options: { nested?: boolean; asInput?: boolean } = {}): Uint8Array {
  const weights = externalTensor('b', 4, location);
  // A Constant node: output "b", attribute "value" (AttributeProto name = 1, t = 5, type TENSOR = 4).
  const constant = [
    ...fieldBytes(2, 'b'),
    ...fieldBytes(4, 'Constant'),
    ...fieldBytes(5, [...fieldBytes(1, 'value'), ...fieldBytes(5, weights), ...fieldVarint(20, 4)]),
  ];
  return modelOf(
    addGraph('external', {
      before: options.nested ? fieldBytes(1, constant) : [],
      after: [
        ...(options.nested ? [] : fieldBytes(5, weights)),
        ...(options.asInput ? fieldBytes(11, tensorInfo('b', [4])) : []),
      ],
    }),
  );
}

/**
 * `sum = a + b` (b an initializer of ones) with a TrainingInfoProto: an initialization graph
 * setting `b` (initialization = 1, its binding in initialization_binding = 3) and an algorithm
 * graph (algorithm = 2, update_binding = 4). `external` puts a tensor naming the file `secret` in
 * one of the two graphs.
 */
export function trainingInfoModel(options: { external?: 'initialization' | 'algorithm' } = {}): Uint8Array {
  const ones = [
    ...fieldVarint(1, 4),
    ...fieldVarint(2, FLOAT),
    ...fieldBytes(8, 'b'),
    ...fieldBytes(9, [...Buffer.from(new Float32Array([1, 1, 1, 1]).buffer)]),
  ];
  const tensorOf = (graph: 'initialization' | 'algorithm', name: string): number[] =>
    options.external === graph
      ? externalTensor(name, 4, 'secret')
      : [
          ...fieldVarint(1, 4),
          ...fieldVarint(2, FLOAT),
          ...fieldBytes(8, name),
          ...fieldBytes(9, [...Buffer.from(new Float32Array([2, 2, 2, 2]).buffer)]),
        ];
  // initialization: b0 = Identity(init_value); algorithm: b1 = b + step.
  const initialization = [
    ...fieldBytes(1, [...fieldBytes(1, 'init_value'), ...fieldBytes(2, 'b0'), ...fieldBytes(4, 'Identity')]),
    ...fieldBytes(2, 'initialization'),
    ...fieldBytes(5, tensorOf('initialization', 'init_value')),
    ...fieldBytes(12, tensorInfo('b0', [4])),
  ];
  const algorithm = [
    ...fieldBytes(1, [
      ...fieldBytes(1, 'b'),
      ...fieldBytes(1, 'step'),
      ...fieldBytes(2, 'b1'),
      ...fieldBytes(4, 'Add'),
    ]),
    ...fieldBytes(2, 'algorithm'),
    ...fieldBytes(5, tensorOf('algorithm', 'step')),
    ...fieldBytes(12, tensorInfo('b1', [4])),
  ];
  const binding = (key: string, value: string): number[] => [...fieldBytes(1, key), ...fieldBytes(2, value)];
  const trainingInfo = [
    ...fieldBytes(1, initialization),
    ...fieldBytes(2, algorithm),
    ...fieldBytes(3, binding('b', 'b0')),
    ...fieldBytes(4, binding('b', 'b1')),
  ];
  // global_mutable_initializer_name = 30 names b, which the training info may change.
  return modelOf(addGraph('trainable', { after: fieldBytes(5, ones) }), [
    ...fieldBytes(20, trainingInfo),
    ...fieldBytes(30, 'b'),
  ]);
}
