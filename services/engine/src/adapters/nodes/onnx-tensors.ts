import type { OnnxTensorType } from '@weft/contracts';
import { NodeFailure } from '../../domain/nodes/node-executor.js';

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/**
 * Input tensors from node config (`{data, dims, type}`, data flat or nested), flattened and
 * checked here; the ONNX worker turns them into tensors and its outputs back into plain arrays.
 */
export interface TensorSpec {
  data: unknown;
  dims: number[];
  type?: OnnxTensorType;
}

/** Plain arrays: the runtime builds its typed arrays from them (typed arrays from another realm fail its checks). */
export type TensorData = number[] | bigint[] | string[] | boolean[];

export interface TensorInput {
  type: OnnxTensorType;
  data: TensorData;
  dims: number[];
}

/**
 * Nested data in row-major order, in one pass into one array (`flatMap` per element allocated an
 * array per value); flat data, the common case, is used as it is (it is only read).
 */
function flatten(value: unknown): unknown[] {
  if (!Array.isArray(value)) return [value];
  if (!value.some(Array.isArray)) return value;
  const values: unknown[] = [];
  const visit = (items: unknown[]): void => {
    for (const item of items) {
      if (Array.isArray(item)) visit(item);
      else values.push(item);
    }
  };
  visit(value);
  return values;
}

export function tensorInput(name: string, spec: TensorSpec): TensorInput {
  const type = spec.type ?? 'float32';
  const dims = spec.dims;
  if (!Array.isArray(dims) || !dims.every((dim) => Number.isInteger(dim) && dim >= 0)) {
    throw new NodeFailure(`input "${name}": dims must be non-negative integers`);
  }
  const values = flatten(spec.data);
  const expected = dims.reduce((product, dim) => product * dim, 1);
  if (values.length !== expected) {
    throw new NodeFailure(
      `input "${name}": dims [${dims.join(', ')}] need ${expected} values, data has ${values.length}`,
    );
  }
  const wrong = (index: number, what: string): never => {
    throw new NodeFailure(`input "${name}": value ${index} (${JSON.stringify(values[index])}) is not ${what}`);
  };
  switch (type) {
    case 'float32':
    case 'float64': {
      const numbers = values.map((value, index) => (typeof value === 'number' ? value : wrong(index, 'a number')));
      return { type, dims, data: numbers };
    }
    case 'int32':
      return {
        type,
        dims,
        data: values.map((value, index) =>
          Number.isInteger(value) && (value as number) >= -(2 ** 31) && (value as number) < 2 ** 31
            ? (value as number)
            : wrong(index, 'an int32'),
        ),
      };
    case 'int64':
      return {
        type,
        dims,
        data: values.map((value, index) => {
          const integer =
            Number.isSafeInteger(value) || (typeof value === 'string' && /^-?\d{1,20}$/.test(value))
              ? BigInt(value as number | string)
              : undefined;
          // Beyond the int64 range the runtime would wrap the value silently.
          return integer !== undefined && integer >= INT64_MIN && integer <= INT64_MAX
            ? integer
            : wrong(index, 'an int64');
        }),
      };
    case 'bool':
      return {
        type,
        dims,
        data: values.map((value, index) => (typeof value === 'boolean' ? value : wrong(index, 'a boolean'))),
      };
    case 'string':
      return {
        type,
        dims,
        data: values.map((value, index) => (typeof value === 'string' ? value : wrong(index, 'a string'))),
      };
  }
}
