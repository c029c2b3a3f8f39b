/**
 * Finds tensors an ONNX model keeps outside itself. ONNX Runtime loads such "external data" from
 * files named in the model, relative to the engine's working directory: a tenant's model could
 * read the data dir (master key, other organizations' blobs) as weights and return them as
 * outputs. Weft loads models from bytes only, so a model that names any external file is refused.
 * (The worker also points the runtime's external data at an empty directory: see
 * onnx-worker-source.ts. This walk is the first line, with the clear error.)
 *
 * A small walk over the protobuf wire format (no dependency): the messages that can hold a
 * TensorProto (graph initializers, node attributes, subgraphs, functions and their attribute
 * defaults, training info), down to each tensor's `external_data` (field 13) and `data_location`
 * (field 14, EXTERNAL = 1). Field numbers are those of onnx/onnx.proto.
 *
 * It must read the bytes the way the runtime's protobuf parser does, or a model could show it one
 * field and the runtime another. So it refuses as malformed a tag beyond 32 bits or 5 bytes (the
 * parser truncates it: "field 2^29 + 13" is field 13 to it), a length beyond 2^31 or 5 bytes and a
 * varint beyond 10 bytes; and it counts as external any `data_location` but 0 (the parser cuts the
 * enum to 32 bits: 2^32 + 1 is EXTERNAL) and a tensor's field 13 or 14 in any wire type.
 */
type MessageKind = 'model' | 'graph' | 'node' | 'attribute' | 'tensor' | 'sparseTensor' | 'function' | 'trainingInfo';

/** The length-delimited fields of each message that hold another message worth walking. */
const CHILDREN: Record<MessageKind, Record<number, MessageKind>> = {
  // graph, training_info, functions
  model: { 7: 'graph', 20: 'trainingInfo', 25: 'function' },
  // initialization, algorithm (3 and 4 are the string-string binding maps)
  trainingInfo: { 1: 'graph', 2: 'graph' },
  // node, initializer, sparse_initializer
  graph: { 1: 'node', 5: 'tensor', 15: 'sparseTensor' },
  // node, attribute_proto (attribute defaults, which may be tensors)
  function: { 7: 'node', 11: 'attribute' },
  // attribute
  node: { 5: 'attribute' },
  // t, g, tensors, graphs, sparse_tensor, sparse_tensors
  attribute: { 5: 'tensor', 6: 'graph', 10: 'tensor', 11: 'graph', 22: 'sparseTensor', 23: 'sparseTensor' },
  // values, indices
  sparseTensor: { 1: 'tensor', 2: 'tensor' },
  tensor: {},
};
const TENSOR_EXTERNAL_DATA = 13;
const TENSOR_DATA_LOCATION = 14;
const WIRE_VARINT = 0;
const WIRE_FIXED64 = 1;
const WIRE_LENGTH_DELIMITED = 2;
const WIRE_FIXED32 = 5;
/** Tags are uint32 to protobuf; lengths int32. */
const TAG_LIMIT = 2 ** 32;
const LENGTH_LIMIT = 2 ** 31;
/** Subgraphs nest (a Loop in an If ...); deeper than this is no model anyone builds. */
const MAX_DEPTH = 64;

export class OnnxModelFormatError extends Error {
  override name = 'OnnxModelFormatError';
}

/** True when any tensor of the model names external data; throws OnnxModelFormatError on bytes that are not protobuf or that protobuf would read otherwise. */
export function usesExternalData(model: Uint8Array): boolean {
  return walk(model, 0, model.length, 'model', 0);
}

function walk(bytes: Uint8Array, start: number, end: number, kind: MessageKind, depth: number): boolean {
  if (depth > MAX_DEPTH) throw new OnnxModelFormatError('the model nests subgraphs too deeply');
  const children = CHILDREN[kind];
  let at = start;
  while (at < end) {
    const [key, afterKey] = varint(bytes, at, end);
    if (afterKey - at > 5 || key >= TAG_LIMIT) {
      throw new OnnxModelFormatError(
        'the model has a protobuf field tag longer than 32 bits, which Weft refuses (not an ONNX protobuf)',
      );
    }
    const field = Math.floor(key / 8);
    const wireType = key % 8;
    if (field === 0) throw new OnnxModelFormatError('the model is not an ONNX protobuf (field number 0)');
    at = afterKey;
    if (kind === 'tensor' && field === TENSOR_EXTERNAL_DATA) return true;
    if (kind === 'tensor' && field === TENSOR_DATA_LOCATION && wireType !== WIRE_VARINT) return true;
    if (wireType === WIRE_VARINT) {
      const [value, afterValue] = varint(bytes, at, end);
      // Only DEFAULT (0) keeps the data inside: the runtime reads the enum's low 32 bits.
      if (kind === 'tensor' && field === TENSOR_DATA_LOCATION && value !== 0) return true;
      at = afterValue;
    } else if (wireType === WIRE_FIXED64) {
      at += 8;
    } else if (wireType === WIRE_FIXED32) {
      at += 4;
    } else if (wireType === WIRE_LENGTH_DELIMITED) {
      const [length, afterLength] = varint(bytes, at, end);
      if (afterLength - at > 5 || length >= LENGTH_LIMIT) {
        throw new OnnxModelFormatError(
          'the model has a protobuf length longer than 5 bytes or beyond 2 GiB (not an ONNX protobuf)',
        );
      }
      const valueEnd = afterLength + length;
      if (valueEnd > end) throw new OnnxModelFormatError('the model is truncated');
      const child = children[field];
      if (child && walk(bytes, afterLength, valueEnd, child, depth + 1)) return true;
      at = valueEnd;
    } else {
      throw new OnnxModelFormatError(`the model is not an ONNX protobuf (wire type ${wireType})`);
    }
    if (at > end) throw new OnnxModelFormatError('the model is truncated');
  }
  return false;
}

/**
 * A protobuf varint at `at`: its value and the offset after it. The value is exact up to 2^53 and
 * is 0 only when every payload bit is 0, which is all the callers need beyond that.
 */
function varint(bytes: Uint8Array, at: number, end: number): [number, number] {
  let value = 0;
  let scale = 1;
  for (let i = at; i < end && i < at + 10; i++) {
    const byte = bytes[i] as number;
    value += (byte & 0x7f) * scale;
    if (byte < 0x80) return [value, i + 1];
    scale *= 128;
  }
  throw new OnnxModelFormatError('the model is truncated or not an ONNX protobuf');
}
