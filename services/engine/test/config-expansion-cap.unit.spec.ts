import { runGraph } from '../src/application/graph-runner.js';
import { compileGraph } from '../src/domain/graph/execution-graph.js';
import { resolveTemplates, TemplateError } from '../src/domain/graph/templates.js';
import { GraphBuilder } from './fixtures/graph-builder.js';
import { RecordingListener } from './support/recording-listener.js';
import { pureExecutors } from './support/run-in-memory.js';

/**
 * A short config can reference a large value thousands of times: resolved without a cap, it ends
 * the engine with a fatal out-of-memory error (and every replica that resumes the execution).
 */
describe("a node's config is capped once its templates are resolved", () => {
  const big = { text: 'x'.repeat(1024 * 1024) };
  const input = { In: { big } };
  const embedded = 'a{{input["In"]["big"]}}'.repeat(2000);

  test('2,000 embedded references to a 1 MB value fail fast with a TemplateError naming the limit', () => {
    const used = process.memoryUsage().heapUsed;
    expect(() => resolveTemplates({ body: embedded }, input, [], 16 * 1024 * 1024)).toThrow(TemplateError);
    expect(() => resolveTemplates({ body: embedded }, input, [], 16 * 1024 * 1024)).toThrow(
      /more than 16777216 bytes .*WEFT_NODE_CONFIG_MAX_BYTES/,
    );
    // Stopped at the cap: nowhere near the 2 GB the full expansion needs.
    expect(process.memoryUsage().heapUsed - used).toBeLessThan(512 * 1024 * 1024);
  });

  test('whole-value references count the size of what they reference', () => {
    const many = Array.from({ length: 40 }, () => '{{input["In"]["big"]}}');
    expect(() => resolveTemplates({ items: many }, input, [], 16 * 1024 * 1024)).toThrow(TemplateError);
    expect(resolveTemplates({ items: many.slice(0, 10) }, input, [], 16 * 1024 * 1024).items).toHaveLength(10);
  });

  test('the cap is the configured one, literal text counted too', () => {
    expect(resolveTemplates({ a: 'y'.repeat(900) }, input, [], 1024)).toEqual({ a: 'y'.repeat(900) });
    expect(() => resolveTemplates({ a: 'y'.repeat(1100) }, input, [], 1024)).toThrow(TemplateError);
    expect(() => resolveTemplates({ a: '{{input["In"]["big"]["text"]}}' }, input, [], 1024)).toThrow(TemplateError);
  });

  test('the graph runner fails the node whose config grows past its maxConfigBytes', async () => {
    const g = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('Out', 'outputNode', { fields: { body: embedded } })
      .edge('In', 'Out');
    const listener = new RecordingListener();
    const outcome = await runGraph({
      graph: compileGraph(g.snapshot()),
      executors: pureExecutors(),
      executionId: crypto.randomUUID(),
      processId: crypto.randomUUID(),
      organizationId: crypto.randomUUID(),
      triggerNodeId: g.id('In'),
      triggerData: { big },
      signal: new AbortController().signal,
      listener,
      now: () => new Date(),
      connection: () => Promise.reject(new Error('no connections')),
      maxConfigBytes: 4 * 1024 * 1024,
    });
    expect(outcome).toMatchObject({ status: 'failed', error: expect.stringMatching(/more than 4194304 bytes/) });
    expect(outcome.status === 'failed' && outcome.node.label).toBe('Out');
    expect(listener.steps.map((s) => `${s.step} ${s.label}`)).toEqual([
      'started In',
      'completed In',
      'started Out',
      'failed Out',
    ]);
  });
});
