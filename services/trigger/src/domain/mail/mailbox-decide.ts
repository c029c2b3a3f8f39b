import type { MailboxEvent, MailboxState, SeenEmail } from './mailbox-events.js';

/** What a mail poller asks of its mailbox; times come in through the command (epoch ms). */
export type MailboxCommand =
  | { type: 'StartWatching'; now: number }
  | { type: 'ClaimEmails'; now: number; emails: (SeenEmail & { matches: boolean })[] }
  | { type: 'RecordStarted'; id: string; executionId: string }
  | { type: 'DropClaim'; id: string; reason: string }
  | { type: 'FinishPoll'; polledAt: number; foundNew: boolean; overlapMs: number };

/** Gmail's `after:` takes whole seconds: keep a second's margin when forgetting ids. */
const QUERY_GRANULARITY_MS = 1000;

export function decideMailbox(command: MailboxCommand, state: MailboxState): MailboxEvent[] {
  switch (command.type) {
    case 'StartWatching':
      return state.since === null ? [{ type: 'MailboxWatchStarted', data: { since: command.now } }] : [];
    case 'ClaimEmails': {
      const since = state.since ?? command.now;
      const claimed: SeenEmail[] = [];
      const skipped: SeenEmail[] = [];
      const seen = new Set<string>();
      for (const email of command.emails) {
        if (state.known.has(email.id) || seen.has(email.id)) continue;
        seen.add(email.id);
        const seenEmail = { id: email.id, receivedAt: email.receivedAt };
        // Providers date mail in whole seconds (Graph's receivedDateTime, Gmail's after:): mail of
        // the second the watch began counts as new, or one arriving just after the start is lost.
        if (email.matches && email.receivedAt >= since - (since % QUERY_GRANULARITY_MS)) claimed.push(seenEmail);
        else skipped.push(seenEmail);
      }
      if (claimed.length === 0 && skipped.length === 0) return [];
      return [{ type: 'EmailsClaimed', data: { claimedAt: command.now, claimed, skipped } }];
    }
    case 'RecordStarted': {
      const entry = state.known.get(command.id);
      return entry?.status === 'claimed'
        ? [{ type: 'EmailStarted', data: { id: command.id, executionId: command.executionId } }]
        : [];
    }
    case 'DropClaim':
      // Only an unstarted claim: an email whose execution started is never dropped.
      return state.known.get(command.id)?.status === 'claimed'
        ? [{ type: 'ClaimDropped', data: { id: command.id, reason: command.reason } }]
        : [];
    case 'FinishPoll': {
      // An idle mailbox records a poll only once per overlap, so the query window stays bounded.
      const stale = state.lastPollAt === null || command.polledAt - state.lastPollAt >= command.overlapMs;
      if (!command.foundNew && !stale) return [];
      const forgetBefore = queryAfter(command.polledAt, command.overlapMs) - QUERY_GRANULARITY_MS;
      return [{ type: 'MailboxPolled', data: { polledAt: command.polledAt, forgetBefore } }];
    }
    default: {
      const unknown: never = command;
      throw new Error(`unknown mailbox command ${(unknown as { type: string }).type}`);
    }
  }
}

/** The lower bound of the next provider query: the last poll time less an overlap for late-indexed mail. */
export function queryAfter(lastPollAt: number, overlapMs: number): number {
  return lastPollAt - overlapMs;
}

/** The start of the window a poll asks the provider for (rule 1: `after:<last poll>`). */
export function pollWindowStart(state: MailboxState, now: number, overlapMs: number): number {
  const since = state.since ?? now;
  return state.lastPollAt === null ? since : Math.max(queryAfter(state.lastPollAt, overlapMs), since);
}

/** Claims whose execution was never recorded as started and whose claimer had time enough: fire again. */
export function overdueClaims(state: MailboxState, now: number, leaseMs: number): string[] {
  return [...state.known]
    .filter(([, entry]) => entry.status === 'claimed' && entry.claimedAt + leaseMs <= now)
    .map(([id]) => id);
}
