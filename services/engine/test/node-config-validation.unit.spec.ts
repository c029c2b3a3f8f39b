import { validateNodeConfig } from '@weft/contracts';

describe('node config validation (shared with lint)', () => {
  test.each([
    ['scriptNode', { label: 's', code: 'return 1' }],
    ['conditionalNode', { label: 'c', mode: 'conditions', conditions: [{ left: 1, operator: 'eq', right: 1 }] }],
    [
      'conditionalNode',
      { label: 'c', mode: 'switch', value: '{{input["a"]["b"]}}', cases: [{ label: 'x', equals: 1 }] },
    ],
    ['loopNode', { label: 'l', items: '{{input["In"]["list"]}}', concurrency: 4 }],
    ['waitNode', { label: 'w', seconds: 5 }],
    ['waitNode', { label: 'w', until: '2030-01-01T00:00:00Z' }],
    ['integrationNode', { label: 'h', url: 'http://127.0.0.1/x', method: 'POST', bodyType: 'form' }],
    ['sqlNode', { label: 'q', connectionId: 'c1', query: 'select $1', params: [1] }],
    [
      'databaseNode',
      {
        label: 'd',
        connectionId: 'c1',
        table: 'public.items',
        operation: 'upsert',
        values: { a: 1 },
        conflictColumns: ['a'],
      },
    ],
  ])('%s accepts %j', (type, config) => {
    expect(validateNodeConfig(type, config)).toEqual([]);
  });

  test.each([
    ['scriptNode', { label: 's' }, '/config'],
    ['conditionalNode', { label: 'c', mode: 'conditions', conditions: [{ left: 1, operator: 'like' }] }, '/config'],
    ['loopNode', { label: 'l', items: 'not a template' }, '/config/items'],
    ['waitNode', { label: 'w' }, '/config'],
    ['integrationNode', { label: 'h', url: 'http://x', method: 'FETCH' }, '/config/method'],
    ['databaseNode', { label: 'd', connectionId: 'c', table: 'x; drop table y', operation: 'select' }, '/config/table'],
    ['databaseNode', { label: 'd', connectionId: 'c', table: 't', operation: 'delete' }, '/config'],
    ['teleportNode', { label: 't' }, '/type'],
  ])('%s refuses %j', (type, config, path) => {
    const violations = validateNodeConfig(type, config);
    expect(violations.length).toBeGreaterThan(0);
    expect(violations.map((v) => v.path)).toContainEqual(expect.stringMatching(new RegExp(`^${path}`)));
  });
});
