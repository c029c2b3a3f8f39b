/**
 * The mailbox of one mail input node: the stream `mailbox-<processId>-<nodeId>` records when the
 * watch began, the last poll time and every email id seen, so no email starts two executions
 * (DESIGN invariant 2) across restarts, crashes and replicas.
 */

export const mailboxStreamId = (processId: string, nodeId: string): string => `mailbox-${processId}-${nodeId}`;

export interface SeenEmail {
  id: string;
  /** Provider receive time, epoch ms: what the provider's date query compares. */
  receivedAt: number;
}

export type MailboxEvent =
  | { type: 'MailboxWatchStarted'; data: { since: number } }
  | { type: 'EmailsClaimed'; data: { claimedAt: number; claimed: SeenEmail[]; skipped: SeenEmail[] } }
  | { type: 'EmailStarted'; data: { id: string; executionId: string } }
  | { type: 'ClaimDropped'; data: { id: string; reason: string } }
  | { type: 'MailboxPolled'; data: { polledAt: number; forgetBefore: number } };

export const MAILBOX_EVENT_TYPES: readonly MailboxEvent['type'][] = [
  'MailboxWatchStarted',
  'EmailsClaimed',
  'EmailStarted',
  'ClaimDropped',
  'MailboxPolled',
];

export type KnownEmail =
  | { status: 'claimed'; receivedAt: number; claimedAt: number }
  | { status: 'started'; receivedAt: number }
  | { status: 'skipped'; receivedAt: number };

export interface MailboxState {
  /** Emails received before the watch began are not new (the first start does not replay the inbox). */
  since: number | null;
  /** Start time of the last recorded poll (spec mail rule 7). */
  lastPollAt: number | null;
  /** Every email still inside the query window, by provider id. */
  known: ReadonlyMap<string, KnownEmail>;
}

export const initialMailboxState = (): MailboxState => ({ since: null, lastPollAt: null, known: new Map() });

export function evolveMailbox(state: MailboxState, event: MailboxEvent): MailboxState {
  switch (event.type) {
    case 'MailboxWatchStarted':
      return { ...state, since: state.since ?? event.data.since };
    case 'EmailsClaimed': {
      const known = new Map(state.known);
      for (const email of event.data.claimed) {
        if (!known.has(email.id)) {
          known.set(email.id, { status: 'claimed', receivedAt: email.receivedAt, claimedAt: event.data.claimedAt });
        }
      }
      for (const email of event.data.skipped) {
        if (!known.has(email.id)) known.set(email.id, { status: 'skipped', receivedAt: email.receivedAt });
      }
      return { ...state, known };
    }
    case 'EmailStarted': {
      const entry = state.known.get(event.data.id);
      if (!entry || entry.status !== 'claimed') return state;
      const known = new Map(state.known);
      known.set(event.data.id, { status: 'started', receivedAt: entry.receivedAt });
      return { ...state, known };
    }
    case 'ClaimDropped': {
      const entry = state.known.get(event.data.id);
      if (!entry || entry.status !== 'claimed') return state;
      const known = new Map(state.known);
      known.set(event.data.id, { status: 'skipped', receivedAt: entry.receivedAt });
      return { ...state, known };
    }
    case 'MailboxPolled': {
      // Emails older than the next query window cannot be listed again: forget them, unless still unstarted.
      const known = new Map(
        [...state.known].filter(
          ([, entry]) => entry.status === 'claimed' || entry.receivedAt >= event.data.forgetBefore,
        ),
      );
      return { ...state, lastPollAt: Math.max(state.lastPollAt ?? 0, event.data.polledAt), known };
    }
    default: {
      const unknown: never = event;
      throw new Error(`unknown mailbox event ${(unknown as { type: string }).type}`);
    }
  }
}
