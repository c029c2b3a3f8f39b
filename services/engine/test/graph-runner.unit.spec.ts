import { nodeRunKey } from '../src/application/graph-runner.js';
import type { NodeExecutor } from '../src/domain/nodes/node-executor.js';
import { GraphBuilder } from './fixtures/graph-builder.js';
import { pureExecutors, runInMemory } from './support/run-in-memory.js';

/** A side-effect-free stand-in for a script: runs a JS function of the input. */
const fnNode = (fn: (input: Record<string, unknown>) => unknown): NodeExecutor => ({
  type: 'fnNode',
  async execute(_config, input) {
    return { output: await fn(input) };
  },
});

describe('graph runner', () => {
  test('runs a chain, merging parents inputs and outputs under labels', async () => {
    const g = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('Double', 'fnNode')
      .node('Out', 'outputNode', { fields: { total: '{{input["Double"]["value"]}}', name: '{{input["In"]["name"]}}' } })
      .edge('In', 'Double')
      .edge('Double', 'Out');
    const executors = pureExecutors(fnNode((input) => ({ value: (input.In as { n: number }).n * 2 })));
    const { outcome, listener } = await runInMemory(g.snapshot(), g.id('In'), { n: 21, name: 'x' }, { executors });

    expect(outcome.status).toBe('completed');
    expect(listener.output('Out')).toEqual({ total: 42, name: 'x' });
    const outStart = listener.steps.find((s) => s.step === 'started' && s.label === 'Out');
    expect(outStart?.input).toEqual({ In: { n: 21, name: 'x' }, Double: { value: 42 } });
  });

  test('runs independent branches concurrently and waits for every parent', async () => {
    let running = 0;
    let peak = 0;
    const slow = fnNode(async () => {
      running++;
      peak = Math.max(peak, running);
      await new Promise((r) => setTimeout(r, 20));
      running--;
      return { done: true };
    });
    const g = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('A', 'fnNode')
      .node('B', 'fnNode')
      .node('C', 'fnNode')
      .node('Join', 'outputNode')
      .edge('In', 'A')
      .edge('In', 'B')
      .edge('In', 'C')
      .edge('A', 'Join')
      .edge('B', 'Join')
      .edge('C', 'Join');
    const { outcome, listener } = await runInMemory(g.snapshot(), g.id('In'), {}, { executors: pureExecutors(slow) });
    expect(outcome.status).toBe('completed');
    expect(peak).toBe(3);
    const order = listener.steps.map((s) => `${s.step}:${s.label}`);
    expect(order.indexOf('started:Join')).toBeGreaterThan(order.lastIndexOf('completed:C'));
    expect(Object.keys(listener.output('Join') as object).sort()).toEqual(['A', 'B', 'C', 'In']);
  });

  test('skips nodes on inactive handles and everything below whose parents are all skipped', async () => {
    const g = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('Check', 'conditionalNode', {
        mode: 'conditions',
        combinator: 'and',
        conditions: [{ left: '{{input["In"]["amount"]}}', operator: 'gt', right: 100 }],
      })
      .node('Big', 'outputNode')
      .node('Small', 'fnNode')
      .node('AfterSmall', 'outputNode')
      .node('Join', 'outputNode')
      .edge('In', 'Check')
      .edge('Check', 'Big', 'true')
      .edge('Check', 'Small', 'false')
      .edge('Small', 'AfterSmall')
      .edge('Big', 'Join')
      .edge('Small', 'Join');
    const { outcome, listener } = await runInMemory(
      g.snapshot(),
      g.id('In'),
      { amount: 500 },
      {
        executors: pureExecutors(fnNode(() => ({}))),
      },
    );
    expect(outcome.status).toBe('completed');
    expect(listener.output('Check')).toEqual({ branch: 'true' });
    expect(listener.labels('skipped').sort()).toEqual(['AfterSmall', 'Small']);
    expect(listener.labels('completed')).toEqual(expect.arrayContaining(['Big', 'Join']));
  });

  test('only the input node that fired runs; the others and their only-children are skipped', async () => {
    const g = new GraphBuilder()
      .node('Hook', 'inputNode', { triggerType: 'webhook' })
      .node('Cron', 'inputNode', { triggerType: 'schedule' })
      .node('CronOnly', 'outputNode')
      .node('Both', 'outputNode')
      .edge('Cron', 'CronOnly')
      .edge('Hook', 'Both')
      .edge('Cron', 'Both');
    const { listener } = await runInMemory(g.snapshot(), g.id('Hook'), { a: 1 });
    expect(listener.labels('skipped').sort()).toEqual(['Cron', 'CronOnly']);
    expect(listener.output('Both')).toEqual({ Hook: { a: 1 } });
  });

  test('switch mode fires the matching case label, else default', async () => {
    const build = () =>
      new GraphBuilder()
        .node('In', 'inputNode', { triggerType: 'manual' })
        .node('Route', 'conditionalNode', {
          mode: 'switch',
          value: '{{input["In"]["kind"]}}',
          cases: [
            { label: 'invoice', equals: 'invoice' },
            { label: 'receipt', equals: 'receipt' },
          ],
        })
        .node('Invoice', 'outputNode')
        .node('Other', 'outputNode')
        .edge('In', 'Route')
        .edge('Route', 'Invoice', 'invoice')
        .edge('Route', 'Other', 'default');
    const g1 = build();
    const first = await runInMemory(g1.snapshot(), g1.id('In'), { kind: 'invoice' });
    expect(first.listener.labels('skipped')).toEqual(['Other']);
    const g2 = build();
    const second = await runInMemory(g2.snapshot(), g2.id('In'), { kind: 'memo' });
    expect(second.listener.output('Route')).toEqual({ branch: 'default' });
    expect(second.listener.labels('skipped')).toEqual(['Invoice']);
  });

  test('a loop runs its body per item with concurrency and emits results in item order', async () => {
    let running = 0;
    let peak = 0;
    const square = fnNode(async (input) => {
      running++;
      peak = Math.max(peak, running);
      const { item, index } = input.Each as { item: number; index: number };
      await new Promise((r) => setTimeout(r, (5 - index) * 5));
      running--;
      return { value: item * item };
    });
    const g = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('Each', 'loopNode', { items: '{{input["In"]["numbers"]}}', concurrency: 2 })
      .node('Square', 'fnNode')
      .node('Out', 'outputNode', { fields: { results: '{{input["Each"]["results"]}}' } })
      .edge('In', 'Each')
      .edge('Each', 'Square', 'start')
      .edge('Each', 'Out', 'output');
    const { outcome, listener } = await runInMemory(
      g.snapshot(),
      g.id('In'),
      { numbers: [1, 2, 3, 4, 5] },
      {
        executors: pureExecutors(square),
      },
    );
    expect(outcome.status).toBe('completed');
    expect(peak).toBe(2);
    expect(listener.output('Out')).toEqual({
      results: [1, 4, 9, 16, 25].map((value) => ({ Square: { value } })),
    });
    const squareRuns = listener.steps.filter((s) => s.step === 'completed' && s.label === 'Square');
    expect(squareRuns.map((s) => s.iteration[0]?.index).sort()).toEqual([0, 1, 2, 3, 4]);
  });

  test('a failing node fails the run, names the node and stops the rest', async () => {
    const g = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('Boom', 'fnNode')
      .node('Never', 'outputNode')
      .edge('In', 'Boom')
      .edge('Boom', 'Never');
    const executors = pureExecutors(
      fnNode(() => {
        throw new Error('kaboom');
      }),
    );
    const { outcome, listener } = await runInMemory(g.snapshot(), g.id('In'), {}, { executors });
    expect(outcome).toMatchObject({ status: 'failed', error: 'kaboom', node: { label: 'Boom' } });
    expect(listener.steps.find((s) => s.step === 'failed')).toMatchObject({ label: 'Boom', error: 'kaboom' });
    expect(listener.labels('started')).not.toContain('Never');
  });

  test('an output JSON cannot hold fails its node, not the commit of the events', async () => {
    const g = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('Big', 'fnNode')
      .edge('In', 'Big');
    const executors = pureExecutors(fnNode(() => ({ n: 10n })));
    const { outcome, listener } = await runInMemory(g.snapshot(), g.id('In'), {}, { executors });
    expect(outcome).toMatchObject({ status: 'failed', node: { label: 'Big' } });
    expect(outcome.status === 'failed' && outcome.error).toMatch(/output is not JSON: .*BigInt/);
    expect(listener.labels('completed')).not.toContain('Big');
  });

  test('an output with dates is stored as JSON', async () => {
    const g = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('At', 'fnNode')
      .edge('In', 'At');
    const executors = pureExecutors(fnNode(() => ({ at: new Date(0) })));
    const { listener } = await runInMemory(g.snapshot(), g.id('In'), {}, { executors });
    expect(listener.output('At')).toEqual({ at: '1970-01-01T00:00:00.000Z' });
  });

  test('a node whose config breaks its schema fails with the violations, before it does anything', async () => {
    const g = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('Each', 'loopNode', { items: '{{input["In"]["items"]}}', concurrency: 0 })
      .edge('In', 'Each');
    const { outcome } = await runInMemory(g.snapshot(), g.id('In'), { items: [1] });
    expect(outcome).toMatchObject({ status: 'failed', node: { label: 'Each' } });
    expect(outcome.status === 'failed' && outcome.error).toMatch(/^invalid config: \/config\/concurrency must be >= 1/);
  });

  test('an unknown node type fails with a clear error', async () => {
    const g = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('X', 'ocrNode')
      .edge('In', 'X');
    const { outcome } = await runInMemory(g.snapshot(), g.id('In'), {});
    expect(outcome).toMatchObject({ status: 'failed', error: 'no executor for node type "ocrNode"' });
  });

  test('completed nodes given as seeds are not run again (resume)', async () => {
    let calls = 0;
    const counted = fnNode(() => ({ call: ++calls }));
    const g = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('Once', 'fnNode')
      .node('Out', 'outputNode')
      .edge('In', 'Once')
      .edge('Once', 'Out');
    const completed = new Map([
      [nodeRunKey(g.id('In'), []), { input: {}, output: { x: 1 }, handles: ['output'] }],
      [nodeRunKey(g.id('Once'), []), { input: { In: { x: 1 } }, output: { call: 'before' }, handles: ['output'] }],
    ]);
    const { listener } = await runInMemory(
      g.snapshot(),
      g.id('In'),
      { x: 1 },
      {
        executors: pureExecutors(counted),
        completed,
      },
    );
    expect(calls).toBe(0);
    expect(listener.labels('started')).toEqual(['Out']);
    expect(listener.output('Out')).toEqual({ In: { x: 1 }, Once: { call: 'before' } });
  });

  test('a resumed loop does not run again the body nodes of iterations that completed', async () => {
    const calls: number[] = [];
    const square = fnNode((input) => {
      const { item } = input.Each as { item: number };
      calls.push(item);
      return { value: item * item };
    });
    const g = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('Each', 'loopNode', { items: '{{input["In"]["numbers"]}}' })
      .node('Square', 'fnNode')
      .node('Out', 'outputNode', { fields: { results: '{{input["Each"]["results"]}}' } })
      .edge('In', 'Each')
      .edge('Each', 'Square', 'start')
      .edge('Each', 'Out', 'output');
    const iteration0 = [{ loopNodeId: g.id('Each'), index: 0 }];
    const completed = new Map([
      [nodeRunKey(g.id('In'), []), { input: {}, output: { numbers: [2, 3] }, handles: ['output'] }],
      [nodeRunKey(g.id('Square'), iteration0), { input: {}, output: { value: 4 }, handles: ['output'] }],
    ]);
    const { outcome, listener } = await runInMemory(
      g.snapshot(),
      g.id('In'),
      { numbers: [2, 3] },
      {
        executors: pureExecutors(square),
        completed,
      },
    );
    expect(outcome.status).toBe('completed');
    expect(calls).toEqual([3]);
    expect(listener.output('Out')).toEqual({ results: [{ Square: { value: 4 } }, { Square: { value: 9 } }] });
  });

  test('aborting stops the run and reports the reason', async () => {
    const g = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('Wait', 'waitNode', { seconds: 60 })
      .edge('In', 'Wait');
    const controller = new AbortController();
    setTimeout(() => controller.abort('cancelled'), 10);
    const { outcome, listener } = await runInMemory(g.snapshot(), g.id('In'), {}, { signal: controller.signal });
    expect(outcome).toEqual({ status: 'aborted', reason: 'cancelled' });
    expect(listener.labels('completed')).toEqual(['In']);
  });

  test('a wait counts from its first start, so a resumed wait only waits what is left', async () => {
    const g = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('Wait', 'waitNode', { seconds: 3600 })
      .edge('In', 'Wait');
    const firstStarts = new Map([[nodeRunKey(g.id('Wait'), []), new Date(Date.now() - 3600_000)]]);
    const { outcome, listener } = await runInMemory(g.snapshot(), g.id('In'), {}, { firstStarts });
    expect(outcome.status).toBe('completed');
    const waited = listener.output('Wait') as { waitedUntil: string };
    expect(new Date(waited.waitedUntil).getTime()).toBe(
      firstStarts.get(nodeRunKey(g.id('Wait'), []))!.getTime() + 3600_000,
    );
  });

  test('passthroughFiles forwards input files to the output', async () => {
    const file = { name: 'a.pdf', url: 'blob://a', size: 3 };
    const g = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'webhook' })
      .node('Out', 'outputNode', { fields: { ok: true }, passthroughFiles: true })
      .edge('In', 'Out');
    const { listener } = await runInMemory(g.snapshot(), g.id('In'), { files: [file] });
    expect(listener.output('Out')).toEqual({ ok: true, files: [file] });
  });

  test('a cycle is refused before anything runs', async () => {
    const g = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('A', 'outputNode')
      .node('B', 'outputNode')
      .edge('In', 'A')
      .edge('A', 'B')
      .edge('B', 'A');
    await expect(runInMemory(g.snapshot(), g.id('In'), {})).rejects.toThrow(/cycle/);
  });
});
