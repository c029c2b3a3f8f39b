import { TenantSchemaCache } from '../src/validation/tenant-schema-cache.js';

describe('TenantSchemaCache', () => {
  const schema = (n: number) => ({ type: 'object', properties: { v: { type: 'string', pattern: `^a{${n}}$` } } });

  test('a schema compiles once while it is cached; the least recently used is dropped beyond the limit', () => {
    const cache = new TenantSchemaCache(2, 10);
    const first = cache.validator(schema(1));
    expect(cache.validator(schema(1))).toBe(first);
    cache.validator(schema(2));
    cache.validator(schema(1));
    cache.validator(schema(3));
    // 2 was the least recently used: dropped; 1 is still the same validator.
    expect(cache.validator(schema(1))).toBe(first);
    cache.validator(schema(4));
    cache.validator(schema(5));
    const again = cache.validator(schema(1));
    expect(again).not.toBe(first);
    expect(again({ v: 'a' })).toBe(true);
    expect(again({ v: 'aa' })).toBe(false);
  });

  test('validators made by a replaced Ajv instance go on validating, with their own pattern budget', () => {
    const cache = new TenantSchemaCache(10, 2);
    const validators = [1, 2, 3, 4, 5].map((n) => cache.validator(schema(n)));
    validators.forEach((validate, index) => {
      expect(validate({ v: 'a'.repeat(index + 1) })).toBe(true);
      expect(validate({ v: 'b' })).toBe(false);
    });
  });

  test('a refused schema throws its compile error and is not cached', () => {
    const cache = new TenantSchemaCache();
    const refused = { type: 'string', pattern: '(a)\\1' };
    expect(() => cache.validator(refused)).toThrow(/pattern "\(a\)\\1"/);
    expect(() => cache.validator(refused)).toThrow(/pattern "\(a\)\\1"/);
  });
});
