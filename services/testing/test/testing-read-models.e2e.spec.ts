import { loadConfig } from '@weft/config';
import { PostgresEventStore, rebuildReadModels } from '@weft/event-store';
import { openConfiguredDatabase } from '@weft/runtime';
import { WEFT_MODES } from '../../all-in-one/test/weft-modes.js';
import { testingProjections } from '../src/projections/testing-projections.js';
import { BOOTSTRAP_KEY, startTestingStack, type InProcessTestingStack } from './support/testing-stack.js';

const TABLES = ['testing_test_cases', 'testing_test_runs', 'testing_batches'] as const;

/** The testing read models are projections of the testing events: a rebuild gives them back byte for byte. */
describe.each(WEFT_MODES)('testing read models rebuild (%s)', (mode) => {
  let stack: InProcessTestingStack;
  beforeAll(async () => {
    stack = await startTestingStack(mode);
  }, 120_000);
  afterAll(async () => {
    await stack?.stop();
  });

  test('test cases, runs and batches come back from the events alone', async () => {
    const processId = await stack.createProcess(
      'Rebuilt',
      [
        { id: 'in', type: 'inputNode', config: { label: 'In', triggerType: 'webhook' } },
        { id: 'out', type: 'outputNode', config: { label: 'Out', fields: { n: '{{input["In"]["n"]}}' } } },
      ],
      [{ source_node_id: 'in', target_node_id: 'out' }],
    );
    const inputNodeId = await stack.nodeId(processId, 'In');
    const user = stack.as(stack.userKey);
    const schema = { properties: { Out: { properties: { n: { maximum: 5 } } } } };
    const ids: string[] = [];
    for (const n of [1, 9]) {
      const created = await user('POST', `/api/v1/test-cases/by-process/${processId}`, {
        name: `n=${n}`,
        inputNodeId,
        inputData: { n },
        expectedOutputSchema: schema,
      });
      ids.push(created.body.id);
    }
    await user('PUT', `/api/v1/test-cases/by-id/${ids[0]}`, {
      name: 'renamed',
      inputNodeId,
      inputData: { n: 2 },
      tags: ['x'],
    });
    const deleted = await user('POST', `/api/v1/test-cases/by-process/${processId}`, { name: 'gone', inputNodeId });
    await user('DELETE', `/api/v1/test-cases/by-id/${deleted.body.id}`);
    expect((await user('POST', `/api/v1/test-execution/${ids[1]}/run`)).body.status).toBe('failed');
    expect((await stack.as(BOOTSTRAP_KEY)('POST', '/api/v1/test-runs/batch', { processId })).body.status).toBe(
      'completed',
    );
    await stack.under.stopAll();

    const database = await openConfiguredDatabase(loadConfig(stack.under.env));
    try {
      const store = await PostgresEventStore.open(database);
      const snapshot = async () => {
        const rows: Record<string, unknown[]> = {};
        for (const table of TABLES) {
          rows[table] = await store.db.selectFrom(table).selectAll().orderBy('id').execute();
        }
        return rows;
      };
      const before = await snapshot();
      expect(before.testing_test_cases).toHaveLength(2);
      expect(before.testing_test_runs).toHaveLength(3);
      expect(before.testing_batches).toHaveLength(1);
      // Every testing event names its organization and process, so its published subject does too.
      const events = await store.readAll({
        eventTypes: testingProjections.flatMap((projection) => projection.eventTypes),
      });
      expect(events.length).toBeGreaterThan(0);
      expect(
        events.filter((event) => event.metadata.processId !== processId || !event.metadata.organizationId),
      ).toEqual([]);
      const applied = await rebuildReadModels(store, testingProjections);
      expect(applied['testing-test-runs']).toBe(6);
      expect(await snapshot()).toEqual(before);
      await store.close();
    } finally {
      await database.close();
    }
  });
});
