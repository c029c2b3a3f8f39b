/** How long a mail poller waits before its next poll (spec mail rules 5 and 6). */

export interface BackoffSettings {
  /** The node's `pollingInterval`, in milliseconds. */
  initialMs: number;
  /** The ceiling under backoff (spec: 5 minutes). */
  maxMs: number;
}

/**
 * The wait after a poll, given how many polls in a row (this one included) found no email: the
 * initial interval after a poll with emails or the first empty one, then doubling up to the
 * ceiling; a provider's Retry-After is never undercut.
 */
export function nextPollDelay(emptyPollsInARow: number, settings: BackoffSettings, retryAfterMs = 0): number {
  const doublings = Math.min(Math.max(emptyPollsInARow - 1, 0), 40);
  const delay = Math.min(settings.initialMs * 2 ** doublings, Math.max(settings.maxMs, settings.initialMs));
  return Math.max(delay, retryAfterMs);
}
