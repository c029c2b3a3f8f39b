import { CronExpressionParser } from 'cron-parser';
import type { ProblemViolation } from '../problem.js';

/**
 * Checks of an input node's trigger fields (spec "Trigger (input node) configuration"), shared by
 * the catalog's lint (which also refuses to start a process failing them) and the trigger service.
 * Pure: whether a named connection exists is the caller's check (see `triggerConnectionNeeds`).
 */

/** Longest accepted mail polling interval, in seconds (one hour). */
export const MAX_POLLING_INTERVAL_SECONDS = 3600;

export function isIanaTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** A 5-field cron expression (minute hour day-of-month month day-of-week), or why it is not one. */
export function cronExpressionProblem(expression: unknown): string | undefined {
  if (typeof expression !== 'string' || expression.trim() === '') return 'must be a 5-field cron expression';
  if (expression.trim().split(/\s+/).length !== 5) {
    return 'must have exactly 5 fields: minute hour day-of-month month day-of-week';
  }
  try {
    CronExpressionParser.parse(expression, { tz: 'UTC' });
    return undefined;
  } catch (error) {
    return `is not a valid cron expression: ${(error as Error).message}`;
  }
}

/** The connection an input node needs, with the connection types that fit it. */
export interface TriggerConnectionNeed {
  field: string;
  connectionId: string;
  types: string[];
}

const MAIL_OAUTH_TYPES: Record<string, string> = { gmail: 'gmail-oauth', outlook: 'outlook-oauth' };

const present = (value: unknown): boolean => value !== undefined && value !== null && value !== '';

/** Connections the node names (mail triggers), for the caller to check they exist and have the right type. */
export function triggerConnectionNeeds(config: Record<string, unknown>): TriggerConnectionNeed[] {
  const type = config.triggerType;
  if (type !== 'gmail' && type !== 'outlook') return [];
  if (config.authMethod === 'service_account' && typeof config.serviceAccountId === 'string') {
    return [{ field: 'serviceAccountId', connectionId: config.serviceAccountId, types: ['google-service-account'] }];
  }
  if (typeof config.connectionId === 'string' && config.connectionId !== '') {
    return [{ field: 'connectionId', connectionId: config.connectionId, types: [MAIL_OAUTH_TYPES[type]!] }];
  }
  return [];
}

function scheduleViolations(config: Record<string, unknown>, at: string): ProblemViolation[] {
  const violations: ProblemViolation[] = [];
  const cron = cronExpressionProblem(config.cronExpression);
  if (cron) violations.push({ path: `${at}/cronExpression`, message: cron });
  if (present(config.timezone) && (typeof config.timezone !== 'string' || !isIanaTimeZone(config.timezone))) {
    violations.push({ path: `${at}/timezone`, message: 'must be an IANA time zone name such as Europe/Berlin' });
  }
  if (present(config.body) && (typeof config.body !== 'object' || Array.isArray(config.body))) {
    violations.push({ path: `${at}/body`, message: 'must be a JSON object' });
  }
  return violations;
}

function mailViolations(config: Record<string, unknown>, at: string): ProblemViolation[] {
  const violations: ProblemViolation[] = [];
  const interval = config.pollingInterval;
  if (
    present(interval) &&
    (typeof interval !== 'number' ||
      !Number.isInteger(interval) ||
      interval < 1 ||
      interval > MAX_POLLING_INTERVAL_SECONDS)
  ) {
    violations.push({
      path: `${at}/pollingInterval`,
      message: `must be a number of seconds from 1 to ${MAX_POLLING_INTERVAL_SECONDS}`,
    });
  }
  const methods = config.triggerType === 'outlook' ? ['oauth'] : ['oauth', 'service_account'];
  const method = config.authMethod ?? 'oauth';
  if (typeof method !== 'string' || !methods.includes(method)) {
    violations.push({ path: `${at}/authMethod`, message: `must be one of ${methods.join(', ')}` });
  } else if (method === 'service_account') {
    if (typeof config.serviceAccountId !== 'string' || config.serviceAccountId === '') {
      violations.push({ path: `${at}/serviceAccountId`, message: 'is required with authMethod service_account' });
    }
    if (typeof config.impersonationEmail !== 'string' || !config.impersonationEmail.includes('@')) {
      violations.push({ path: `${at}/impersonationEmail`, message: 'must be the mailbox address to impersonate' });
    }
  } else if (typeof config.connectionId !== 'string' || config.connectionId === '') {
    violations.push({ path: `${at}/connectionId`, message: 'must name the connected mail account (authMethod oauth)' });
  }
  for (const field of ['senderFilter', 'subjectFilter'] as const) {
    if (present(config[field]) && typeof config[field] !== 'string') {
      violations.push({ path: `${at}/${field}`, message: 'must be a comma-separated string' });
    }
  }
  if (config.triggerType === 'outlook') {
    if (
      present(config.sharedMailbox) &&
      (typeof config.sharedMailbox !== 'string' || !config.sharedMailbox.includes('@'))
    ) {
      violations.push({ path: `${at}/sharedMailbox`, message: 'must be the shared mailbox address' });
    }
    const folders = config.folders;
    if (
      present(folders) &&
      (!Array.isArray(folders) || folders.some((folder) => typeof folder !== 'string' || folder.trim() === ''))
    ) {
      violations.push({ path: `${at}/folders`, message: 'must be an array of folder names' });
    }
  }
  if (present(config.attachmentMaxSize)) {
    const size = config.attachmentMaxSize;
    if (typeof size !== 'number' || !Number.isInteger(size) || size < 0) {
      violations.push({ path: `${at}/attachmentMaxSize`, message: 'must be a non-negative integer (bytes)' });
    }
  }
  return violations;
}

/** Violations of an input node's trigger fields, with paths under `at` (e.g. `/nodes/2/config`). */
export function triggerConfigViolations(config: Record<string, unknown>, at = '/config'): ProblemViolation[] {
  switch (config.triggerType) {
    case 'schedule':
      return scheduleViolations(config, at);
    case 'gmail':
    case 'outlook':
      return mailViolations(config, at);
    case 'webhook':
      if (present(config.dataBlockId) && !present(config.schemaId)) {
        return [{ path: `${at}/schemaId`, message: 'is required when dataBlockId is set' }];
      }
      return [];
    default:
      return [];
  }
}
