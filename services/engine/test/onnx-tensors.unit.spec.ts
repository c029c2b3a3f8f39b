import { tensorInput } from '../src/adapters/nodes/onnx-tensors.js';

describe('ONNX input tensors', () => {
  test('int32 values outside the int32 range are refused, not wrapped', () => {
    expect(tensorInput('a', { data: [-(2 ** 31), 2 ** 31 - 1], dims: [2], type: 'int32' }).data).toEqual([
      -(2 ** 31),
      2 ** 31 - 1,
    ]);
    expect(() => tensorInput('a', { data: [2 ** 31], dims: [1], type: 'int32' })).toThrow(
      'input "a": value 0 (2147483648) is not an int32',
    );
  });

  test('int64 values as numbers or strings within the int64 range; beyond it refused', () => {
    expect(tensorInput('b', { data: ['9223372036854775807', -5], dims: [2], type: 'int64' }).data).toEqual([
      9223372036854775807n,
      -5n,
    ]);
    expect(() => tensorInput('b', { data: ['9223372036854775808'], dims: [1], type: 'int64' })).toThrow(
      'input "b": value 0 ("9223372036854775808") is not an int64',
    );
    expect(() => tensorInput('b', { data: ['1'.repeat(400)], dims: [1], type: 'int64' })).toThrow(/is not an int64/);
  });
});
