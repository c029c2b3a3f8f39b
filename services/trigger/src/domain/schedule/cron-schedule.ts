import { CronExpressionParser } from 'cron-parser';

/** A scheduled input node's timing: its 5-field cron expression read in its IANA zone (default UTC). */
export interface CronSchedule {
  expression: string;
  timeZone: string;
}

export function scheduleOf(config: Record<string, unknown>): CronSchedule {
  const timeZone = typeof config.timezone === 'string' && config.timezone !== '' ? config.timezone : 'UTC';
  const expression = typeof config.cronExpression === 'string' ? config.cronExpression : '';
  return { expression, timeZone };
}

/** The first tick strictly after `after`; cron-parser moves a wall time a DST gap skips to just after the gap. */
export function nextTick(schedule: CronSchedule, after: Date): Date {
  return CronExpressionParser.parse(schedule.expression, { tz: schedule.timeZone, currentDate: after }).next().toDate();
}

/** The latest tick at or before `at`, or undefined when there is none after `notBefore`. */
export function latestTickSince(schedule: CronSchedule, notBefore: Date, at: Date): Date | undefined {
  const latest = CronExpressionParser.parse(schedule.expression, {
    tz: schedule.timeZone,
    currentDate: new Date(at.getTime() + 1),
  })
    .prev()
    .toDate();
  return latest.getTime() > notBefore.getTime() ? latest : undefined;
}

/** `2026-03-30T09:00:00.000+02:00`: the instant as wall time in `timeZone` with that zone's offset. */
export function isoInZone(instant: Date, timeZone: string): string {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      timeZoneName: 'longOffset',
    })
      .formatToParts(instant)
      .map((part) => [part.type, part.value]),
  );
  // longOffset is "GMT+02:00", or plain "GMT" at offset zero.
  const offset = parts.timeZoneName === 'GMT' ? '+00:00' : String(parts.timeZoneName).slice(3);
  const millis = String(instant.getUTCMilliseconds()).padStart(3, '0');
  return `${parts.year}-${parts.month}-${parts.day}T${parts.hour}:${parts.minute}:${parts.second}.${millis}${offset}`;
}

/** The scheduled input node's output (spec): the tick time with its offset, the expression and the body's fields. */
export function tickOutput(schedule: CronSchedule, tick: Date, body: unknown): Record<string, unknown> {
  const fields = body !== null && typeof body === 'object' && !Array.isArray(body) ? body : {};
  return { triggered_at: isoInZone(tick, schedule.timeZone), cron_expression: schedule.expression, ...fields };
}
