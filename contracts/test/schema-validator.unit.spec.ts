import { createApiKeyBody, createOrganizationBody, schemaCompileError, validateAgainst } from '@weft/contracts';

describe('contract schema validation', () => {
  const userId = '6f1e6a55-5c5b-4a7e-9f39-3f8f0b0a3c11';
  test.each([
    ['a valid key request', { name: 'ci', userName: 'Ada', userId }, []],
    [
      'every violation is listed',
      { name: '', userId: 'nope', extra: 1 },
      [
        { path: '/extra', message: 'is not allowed' },
        { path: '/userName', message: 'is required' },
        { path: '/name', message: 'must NOT have fewer than 1 characters' },
        { path: '/userId', message: 'must match format "uuid"' },
      ],
    ],
    ['a non-object body', 'text', [{ path: '/', message: 'must be object' }]],
    [
      'process ids must be uuids',
      { name: 'a', userName: 'b', userId, processIds: ['x'] },
      [{ path: '/processIds/0', message: 'must match format "uuid"' }],
    ],
  ])('%s', (_name, body, expected) => {
    expect(validateAgainst(createApiKeyBody, body)).toEqual(expect.arrayContaining(expected));
    expect(validateAgainst(createApiKeyBody, body)).toHaveLength(expected.length);
  });

  test('organization body requires a name', () => {
    expect(validateAgainst(createOrganizationBody, {})).toEqual([{ path: '/name', message: 'is required' }]);
  });

  test('schema compile errors are reported, valid schemas pass', () => {
    expect(schemaCompileError({ type: 'object' })).toBeUndefined();
    expect(schemaCompileError({ type: 'no-such-type' })).toMatch(/type/);
  });
});
