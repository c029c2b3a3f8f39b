import type { StreamAppend } from '@weft/event-store';
import { ExecutionEventWriter } from '../src/application/execution-event-writer.js';
import { ExecutionRun } from '../src/application/execution-run.js';
import { initialExecutionState } from '../src/domain/execution/state.js';
import { startCommand } from './support/start-command.js';

/**
 * a held run whose one append fails with an error that is not a refusal (a transient
 * database error: serialization failure, deadlock, lost connection) must not leave a promise
 * rejection no one handles (Node 24 ends the process on one: every run on the engine is lost).
 */
const executionId = crypto.randomUUID();
const processId = crypto.randomUUID();
const organizationId = crypto.randomUUID();

const accept = {
  type: 'AcceptExecution' as const,
  data: { executionId, processId, organizationId, triggerNodeId: 'In', triggeredByUserId: null, source: 'test' },
  metadata: { now: new Date() },
};
const start = startCommand({ executionId, processId, organizationId });

const transient = (): Error => Object.assign(new Error('could not serialize access'), { code: '40001' });

describe('a held run whose append fails', () => {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown): void => void unhandled.push(reason);
  beforeAll(() => process.on('unhandledRejection', onUnhandled));
  afterAll(() => process.off('unhandledRejection', onUnhandled));

  test('leaves no unhandled rejection behind', async () => {
    const writer = new ExecutionEventWriter(async (_batch: readonly StreamAppend[]) => {
      throw transient();
    });
    const failures: unknown[] = [];
    const run = new ExecutionRun(
      executionId,
      initialExecutionState(),
      0,
      {},
      writer,
      () => new Date(),
      (error) => failures.push(error),
    );
    run.hold(10_000);
    run.execute(accept);
    run.execute(start);
    await expect(run.recorded()).rejects.toThrow('could not serialize access');
    await expect(run.flushed()).rejects.toThrow('could not serialize access');
    // Let any derived promise settle and Node report it.
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(failures).toHaveLength(1);
    expect(unhandled).toEqual([]);
  });

  test('a discarded run (its start refused before launch) writes nothing when its hold runs out', async () => {
    const commits: StreamAppend[][] = [];
    const writer = new ExecutionEventWriter(async (batch: readonly StreamAppend[]) => void commits.push([...batch]));
    const run = new ExecutionRun(
      executionId,
      initialExecutionState(),
      0,
      {},
      writer,
      () => new Date(),
      () => undefined,
    );
    run.hold(20);
    run.execute(accept);
    // startNow: StartExecution throws here (EventTooLargeError, say); the run is discarded, never launched.
    run.discard();
    await new Promise((resolve) => setTimeout(resolve, 100));
    // A lone ExecutionAccepted would read 'queued' for ever and count as running.
    expect(commits.flat().flatMap((append) => append.events.map((event) => event.type))).toEqual([]);
  });
});
