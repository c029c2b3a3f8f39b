import { schemaCompileError, tenantSchemaAjv } from '../src/validation/tenant-schemas.js';

describe("users' JSON Schemas", () => {
  test('a catastrophic-backtracking pattern runs in linear time', () => {
    const validate = tenantSchemaAjv().compile({ type: 'string', pattern: '^(a+)+$' });
    // 100,000 characters: a backtracking engine would need longer than the universe has existed.
    expect(validate(`${'a'.repeat(100_000)}!`)).toBe(false);
    expect(validate('aaaa')).toBe(true);
  });

  test('Unicode classes still match; patterns that cannot run in linear time are refused with the cause', () => {
    const letters = tenantSchemaAjv().compile({ type: 'string', pattern: '^\\p{L}+$' });
    expect(letters('héllo')).toBe(true);
    expect(letters('h3llo')).toBe(false);
    expect(schemaCompileError({ type: 'string', pattern: '(a)\\1' })).toMatch(/invalid escape sequence/);
    expect(schemaCompileError({ type: 'string', pattern: '^a(?=b)' })).toMatch(/error parsing regexp/);
    expect(schemaCompileError({ type: 'string', pattern: '^[a-z]+$' })).toBeUndefined();
  });

  test('formats are checked as in the contract schemas', () => {
    const email = tenantSchemaAjv().compile({ type: 'string', format: 'email' });
    expect(email('ada@weft.test')).toBe(true);
    expect(email('not an address')).toBe(false);
  });
});
