import type { Violation } from '../shared/violation.js';
import type { ProcessSettings } from './events.js';

const isHttpUrl = (value: string): boolean => {
  try {
    const url = new URL(value);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
};

/**
 * The longest time-out a process may have: a year (366 days); the engine's timers step past Node's
 * 2^31-1 ms limit. Same value as the contract's request schemas.
 */
export const MAX_TIMEOUT_SECONDS = 31_622_400;

/** Rules of the settings a process record carries; checks only the fields present. */
export function settingsViolations(settings: Partial<ProcessSettings>): Violation[] {
  const violations: Violation[] = [];
  const { name, description, maxRetries, errorWebhookUrl, timeoutSeconds } = settings;
  if (name !== undefined && (typeof name !== 'string' || name.trim().length === 0)) {
    violations.push({ path: '/name', message: 'must be a non-empty string' });
  }
  if (description !== undefined && typeof description !== 'string') {
    violations.push({ path: '/description', message: 'must be a string' });
  }
  if (maxRetries !== undefined && !(Number.isInteger(maxRetries) && maxRetries >= 0 && maxRetries <= 100)) {
    violations.push({ path: '/max_retries', message: 'must be an integer from 0 to 100' });
  }
  if (
    timeoutSeconds !== undefined &&
    !(Number.isInteger(timeoutSeconds) && timeoutSeconds >= 0 && timeoutSeconds <= MAX_TIMEOUT_SECONDS)
  ) {
    violations.push({
      path: '/timeout_seconds',
      message: `must be an integer from 0 to ${MAX_TIMEOUT_SECONDS}`,
    });
  }
  if (errorWebhookUrl !== undefined && errorWebhookUrl !== null && !isHttpUrl(errorWebhookUrl)) {
    violations.push({ path: '/error_webhook_url', message: 'must be an http(s) URL or null' });
  }
  return violations;
}
