/**
 * Finds tensors an ONNX model keeps outside itself. ONNX Runtime loads such "external data" from
 * files named in the model, relative to the engine's working directory: a tenant's model could
 * read the data dir (master key, other organizations' blobs) as weights and return them as
 * outputs. Weft loads models from bytes only, so a model that names any external file is refused.
 *
 * A small walk over the protobuf wire format (no dependency): the messages that can hold a
 * TensorProto (graph initializers, node attributes, subgraphs, functions, training info), down
 * to each tensor's `external_data` (field 13) and `data_location` (field 14, EXTERNAL = 1).
 */
type MessageKind = 'model' | 'graph' | 'node' | 'attribute' | 'tensor' | 'sparseTensor' | 'function' | 'trainingInfo';

/** The length-delimited fields of each message that hold another message worth walking. */
const CHILDREN: Record<MessageKind, Record<number, MessageKind>> = {
  model: { 7: 'graph', 20: 'trainingInfo', 25: 'function' },
  trainingInfo: { 1: 'graph', 2: 'graph' },
  graph: { 1: 'node', 5: 'tensor', 15: 'sparseTensor' },
  function: { 7: 'node' },
  node: { 5: 'attribute' },
  attribute: { 5: 'tensor', 6: 'graph', 10: 'tensor', 11: 'graph', 22: 'sparseTensor', 23: 'sparseTensor' },
  sparseTensor: { 1: 'tensor', 2: 'tensor' },
  tensor: {},
};
const TENSOR_EXTERNAL_DATA = 13;
const TENSOR_DATA_LOCATION = 14;
const DATA_LOCATION_EXTERNAL = 1;
/** Subgraphs nest (a Loop in an If ...); deeper than this is no model anyone builds. */
const MAX_DEPTH = 64;

export class OnnxModelFormatError extends Error {
  override name = 'OnnxModelFormatError';
}

/** True when any tensor of the model names external data; throws OnnxModelFormatError on bytes that are not protobuf. */
export function usesExternalData(model: Uint8Array): boolean {
  return walk(model, 0, model.length, 'model', 0);
}

function walk(bytes: Uint8Array, start: number, end: number, kind: MessageKind, depth: number): boolean {
  if (depth > MAX_DEPTH) throw new OnnxModelFormatError('the model nests subgraphs too deeply');
  const children = CHILDREN[kind];
  let at = start;
  while (at < end) {
    const [key, afterKey] = varint(bytes, at, end);
    const field = Math.floor(key / 8);
    const wireType = key % 8;
    at = afterKey;
    if (wireType === 0) {
      const [value, afterValue] = varint(bytes, at, end);
      if (kind === 'tensor' && field === TENSOR_DATA_LOCATION && value === DATA_LOCATION_EXTERNAL) return true;
      at = afterValue;
    } else if (wireType === 1) {
      at += 8;
    } else if (wireType === 5) {
      at += 4;
    } else if (wireType === 2) {
      const [length, afterLength] = varint(bytes, at, end);
      const valueEnd = afterLength + length;
      if (valueEnd > end) throw new OnnxModelFormatError('the model is truncated');
      if (kind === 'tensor' && field === TENSOR_EXTERNAL_DATA) return true;
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

/** A protobuf varint at `at`: its value (exact up to 2^53) and the offset after it. */
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
