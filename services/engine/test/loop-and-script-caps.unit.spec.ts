import { ScriptSandbox } from '../src/adapters/nodes/script-sandbox.js';
import { createLoopNodeExecutor } from '../src/domain/nodes/loop-node.js';
import { GraphBuilder } from './fixtures/graph-builder.js';
import { pureExecutors, runInMemory } from './support/run-in-memory.js';

describe('loop item cap (WEFT_LOOP_MAX_ITEMS)', () => {
  const loopOver = (items: number[]) => {
    const g = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('Each', 'loopNode', { items: '{{input["In"]["items"]}}' })
      .node('Body', 'outputNode', {})
      .edge('In', 'Each')
      .edge('Each', 'Body', 'start');
    return runInMemory(g.snapshot(), g.id('In'), { items }, { executors: pureExecutors(createLoopNodeExecutor(3)) });
  };

  test('a loop over more items than allowed fails before any body run', async () => {
    const { outcome, listener } = await loopOver([1, 2, 3, 4]);
    expect(outcome).toMatchObject({ status: 'failed', error: expect.stringContaining('4 items, more than the 3') });
    expect(listener.labels('started')).not.toContain('Body');
  });

  test('a loop at the limit runs every item', async () => {
    const { outcome, listener } = await loopOver([1, 2, 3]);
    expect(outcome.status).toBe('completed');
    expect(listener.labels('started').filter((label) => label === 'Body')).toHaveLength(3);
  });
});

describe('script output cap (WEFT_SCRIPT_OUTPUT_MAX_BYTES)', () => {
  const sandbox = new ScriptSandbox({ maxOutputChars: 1000 });
  afterAll(() => sandbox.dispose());
  // The time limit is not under test: it covers building the organization's isolate and realm,
  // which on a loaded CI machine took longer than 2 s once.
  const run = (code: string) =>
    sandbox.run({ organizationId: crypto.randomUUID(), code, input: {}, timeoutMs: 30_000, memoryMb: 32 });

  test('a result larger than the cap is refused inside the isolate', async () => {
    await expect(run('return "x".repeat(5000)')).rejects.toThrow(/larger than 1000 characters of JSON/);
  });

  test('a result within the cap is returned', async () => {
    expect(await run('return "x".repeat(900)')).toHaveLength(900);
  });
});
