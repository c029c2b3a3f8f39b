import { AppendRefusedError } from '../src/application/execution-event-writer.js';
import { commandsAfterRefusedAppend } from '../src/application/refused-append.js';
import { initialExecutionState, runKey, type NodeRun } from '../src/domain/execution/state.js';
import { compileGraph } from '../src/domain/graph/execution-graph.js';
import { unstorableStrings } from '../src/domain/graph/json-value.js';
import { GraphBuilder } from './fixtures/graph-builder.js';

/**
 * The events that record a refused append must themselves be storable: they name the node and
 * the cause, and never quote the value the database refused.
 */
describe('failing an execution whose events the database refused', () => {
  const g = new GraphBuilder()
    .node('In', 'inputNode', { triggerType: 'manual' })
    .node('Bad', 'scriptNode', { code: 'return 1;' })
    .edge('In', 'Bad');
  const graph = compileGraph(g.snapshot());
  const now = new Date('2026-11-23T12:00:00Z');
  const runningBad = () => {
    const state = initialExecutionState();
    state.nodeRuns.set(runKey(g.id('Bad')), {
      nodeId: g.id('Bad'),
      iteration: [],
      status: 'running',
    } as unknown as NodeRun);
    return state;
  };
  const refused = (data: unknown, sqlState = '22P05', cause: unknown = new Error('unsupported Unicode escape')) =>
    new AppendRefusedError('execution-x', [{ type: 'NodeCompleted', data }], sqlState, cause);

  test.each([
    [{ nodeId: g.id('Bad'), outputData: { a: 'x\u0000' } }, 'output contains a NUL character at /a'],
    [
      { nodeId: g.id('Bad'), outputData: [{ 'k\u0000\ud800': 1 }] },
      'output contains a NUL character in a member name at /0/k\ufffd\ufffd',
    ],
    [{ nodeId: g.id('Bad'), outputData: '\udfff' }, 'output contains a lone surrogate, which'],
  ])('%j: the node and then the execution fail, naming the cause and quoting nothing refused', (data, cause) => {
    const commands = commandsAfterRefusedAppend(refused(data), graph, runningBad(), now);
    expect(commands.map((c) => c.type)).toEqual(['FailNode', 'FailExecution']);
    expect(commands[0]?.data).toMatchObject({ nodeId: g.id('Bad'), error: expect.stringContaining(cause) });
    expect(commands[1]?.data).toMatchObject({
      errorMessage: expect.stringMatching(new RegExp(`^Bad: ${cause.replace(/[/\\[\]()]/g, '\\$&')}`)),
      failedNode: { id: g.id('Bad'), name: 'Bad', type: 'scriptNode' },
    });
    expect(unstorableStrings(commands.map((c) => c.data))).toEqual([]);
  });

  test('a refusal with nothing unstorable (a constraint) quotes the database message, made storable', () => {
    const commands = commandsAfterRefusedAppend(
      refused({ nodeId: g.id('Bad'), outputData: { ok: 1 } }, '23514', new Error('violates check "c"\u0000')),
      graph,
      runningBad(),
      now,
    );
    expect(commands[1]?.data).toMatchObject({
      errorMessage: 'Bad: the database refused to store the result (SQLSTATE 23514: violates check "c"\ufffd)',
    });
  });

  test('a node that is not running is not failed again; the execution is', () => {
    const commands = commandsAfterRefusedAppend(
      refused({ nodeId: g.id('Bad'), outputData: '\u0000' }),
      graph,
      initialExecutionState(),
      now,
    );
    expect(commands.map((c) => c.type)).toEqual(['FailExecution']);
  });

  test('the refused event is not logged with its data', () => {
    expect(JSON.stringify(refused({ secret: 'value' }))).not.toContain('value');
  });
});
