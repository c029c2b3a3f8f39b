/**
 * Events of a scheduled input node's stream (`schedule-<processId>-<nodeId>`): each tick is claimed
 * by appending ScheduleTicked at the version the claimer read, so of several replicas exactly one
 * appends it and fires; ScheduleDisarmed marks a stop of the process (no catch-up after it).
 */
export type ScheduleEvent =
  | { type: 'ScheduleTicked'; data: { tick: string; executionId: string; cronExpression: string; timezone: string } }
  | { type: 'ScheduleDisarmed'; data: { at: string } };

export const scheduleStreamId = (processId: string, nodeId: string): string => `schedule-${processId}-${nodeId}`;

/** What a start needs to know: the stream's version, its last claimed tick, and whether the process was stopped since. */
export interface ScheduleMark {
  version: number;
  lastTick?: Date;
  disarmed: boolean;
}

export function markOf(version: number, last: { type: string; data: unknown } | undefined): ScheduleMark {
  if (!last) return { version, disarmed: true };
  if (last.type === 'ScheduleTicked') {
    return { version, lastTick: new Date((last.data as { tick: string }).tick), disarmed: false };
  }
  return { version, disarmed: true };
}
