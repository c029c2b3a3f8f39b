import { WrongExpectedVersionError } from '@weft/event-store';
import type { Clock } from '../../application/clock.js';
import type { ListenerContext, ListenerFactory } from '../../application/listener-port.js';
import {
  latestTickSince,
  nextTick,
  scheduleOf,
  tickOutput,
  type CronSchedule,
} from '../../domain/schedule/cron-schedule.js';
import { markOf, scheduleStreamId, type ScheduleMark } from '../../domain/schedule/schedule-events.js';
import { firingExecutionId } from '../../domain/execution-id.js';

export interface ScheduleListenerOptions {
  clock: Clock;
  /** Wait before firing a claimed tick again after its request failed; default 5 s. */
  retryMs?: number;
}

/**
 * The scheduled input: sleeps until the next tick of `config.cronExpression` in `config.timezone`,
 * claims it in the node's schedule stream (once across replicas) and fires it. After a start it
 * fires the latest tick missed while no replica ran (once), unless the process was stopped since.
 */
export const scheduleListenerFactory =
  (options: ScheduleListenerOptions): ListenerFactory =>
  (context) =>
    new ScheduleListener(context, options.clock, options.retryMs ?? 5000);

class ScheduleListener {
  private readonly schedule: CronSchedule;
  private readonly streamId: string;
  private loop: Promise<void> | undefined;

  constructor(
    private readonly context: ListenerContext,
    private readonly clock: Clock,
    private readonly retryMs: number,
  ) {
    this.schedule = scheduleOf(context.config);
    this.streamId = scheduleStreamId(context.processId, context.nodeId);
  }

  async start(): Promise<void> {
    const startedAt = this.context.now();
    // A bad expression or zone fails the start (shown as failing), not each tick.
    nextTick(this.schedule, startedAt);
    const mark = await this.mark();
    const due: Date[] = [];
    if (!mark.disarmed && mark.lastTick) {
      // The last claimed tick fires again (same execution id: a no-op when it ran) in case its claimer died first.
      due.push(mark.lastTick);
      const missed = latestTickSince(this.schedule, mark.lastTick, startedAt);
      if (missed && (await this.claim(missed))) due.push(missed);
    }
    this.loop = this.run(startedAt, due);
  }

  async stop(): Promise<void> {
    await this.loop;
    if (this.context.signal.reason === 'process-stopped') {
      await this.context.store.append(
        this.streamId,
        [{ type: 'ScheduleDisarmed', data: { at: this.context.now().toISOString() }, metadata: this.metadata() }],
        { expectedVersion: 'any' },
      );
    }
  }

  private async run(from: Date, pending: Date[]): Promise<void> {
    const { signal } = this.context;
    let cursor = from;
    while (!signal.aborted) {
      while (pending.length > 0 && (await this.fire(pending[0]!))) pending.shift();
      const next = nextTick(this.schedule, cursor);
      this.context.report({ nextRunAt: next.toISOString() });
      const retryAt = this.clock.now().getTime() + this.retryMs;
      const wake = pending.length > 0 ? new Date(Math.min(next.getTime(), retryAt)) : next;
      await this.clock.sleepUntil(wake, signal);
      if (signal.aborted) break;
      const now = this.clock.now();
      if (now.getTime() < next.getTime()) continue;
      // After a stall past several ticks only the latest fires, as after a restart.
      const tick = latestTickSince(this.schedule, cursor, now) ?? next;
      cursor = tick;
      if (await this.claimQuietly(tick)) pending.push(tick);
      else this.context.report({ lastSuccessAt: now.toISOString() });
    }
  }

  /** Fires a claimed tick; false (reported, retried) when the request could not be queued. */
  private async fire(tick: Date): Promise<boolean> {
    try {
      await this.context.fire(tickOutput(this.schedule, tick, this.context.config.body), {
        dedupeKey: tick.toISOString(),
      });
      this.context.report({ state: 'listening', lastSuccessAt: this.clock.now().toISOString(), lastError: null });
      return true;
    } catch (error) {
      if (this.context.signal.aborted) return true;
      this.context.report({
        state: 'failing',
        lastError: {
          message: `tick ${tick.toISOString()}: ${(error as Error).message}`,
          at: this.clock.now().toISOString(),
        },
      });
      return false;
    }
  }

  private async claimQuietly(tick: Date): Promise<boolean> {
    try {
      return await this.claim(tick);
    } catch (error) {
      this.context.report({
        state: 'failing',
        lastError: {
          message: `could not claim tick ${tick.toISOString()}: ${(error as Error).message}`,
          at: this.clock.now().toISOString(),
        },
      });
      return false;
    }
  }

  /** Appends the tick at the version read; true for the one replica whose append wins. */
  private async claim(tick: Date): Promise<boolean> {
    for (;;) {
      const mark = await this.mark();
      if (mark.lastTick && mark.lastTick.getTime() >= tick.getTime()) return false;
      try {
        await this.context.store.append(
          this.streamId,
          [
            {
              type: 'ScheduleTicked',
              data: {
                tick: tick.toISOString(),
                executionId: firingExecutionId(this.context.processId, this.context.nodeId, tick.toISOString()),
                cronExpression: this.schedule.expression,
                timezone: this.schedule.timeZone,
              },
              metadata: this.metadata(),
            },
          ],
          { expectedVersion: mark.version === 0 ? 'no_stream' : mark.version },
        );
        return true;
      } catch (error) {
        if (!(error instanceof WrongExpectedVersionError)) throw error;
      }
    }
  }

  private async mark(): Promise<ScheduleMark> {
    const version = await this.context.store.streamVersion(this.streamId);
    if (version === 0) return markOf(0, undefined);
    const [last] = await this.context.store.readStream(this.streamId, { fromVersion: version });
    return markOf(version, last);
  }

  private metadata(): Record<string, string> {
    return { organizationId: this.context.organizationId, processId: this.context.processId };
  }
}
