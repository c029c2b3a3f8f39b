import {
  decideMailbox,
  overdueClaims,
  pollWindowStart,
  type MailboxCommand,
} from '../src/domain/mail/mailbox-decide.js';
import {
  evolveMailbox,
  initialMailboxState,
  type MailboxEvent,
  type MailboxState,
} from '../src/domain/mail/mailbox-events.js';

const given = (
  events: MailboxEvent[],
): { when: (command: MailboxCommand) => { then: (expected: MailboxEvent[]) => void } } => ({
  when: (command) => ({
    then: (expected) =>
      expect(decideMailbox(command, events.reduce(evolveMailbox, initialMailboxState()))).toEqual(expected),
  }),
});

const state = (events: MailboxEvent[]): MailboxState => events.reduce(evolveMailbox, initialMailboxState());
const watching: MailboxEvent = { type: 'MailboxWatchStarted', data: { since: 1_000 } };

describe('mailbox decider', () => {
  it('starts watching once', () => {
    given([]).when({ type: 'StartWatching', now: 1_000 }).then([watching]);
    given([watching]).when({ type: 'StartWatching', now: 9_000 }).then([]);
  });

  it('counts mail dated (in whole seconds, as providers date it) in the second the watch began as new', () => {
    given([{ type: 'MailboxWatchStarted', data: { since: 10_700 } }])
      .when({
        type: 'ClaimEmails',
        now: 11_000,
        emails: [
          { id: 'same-second', receivedAt: 10_000, matches: true },
          { id: 'second-before', receivedAt: 9_000, matches: true },
        ],
      })
      .then([
        {
          type: 'EmailsClaimed',
          data: {
            claimedAt: 11_000,
            claimed: [{ id: 'same-second', receivedAt: 10_000 }],
            skipped: [{ id: 'second-before', receivedAt: 9_000 }],
          },
        },
      ]);
  });

  it('claims matching new emails, records the others as skipped, ignores known ids and mail from before the watch', () => {
    given([
      watching,
      { type: 'EmailsClaimed', data: { claimedAt: 2_000, claimed: [{ id: 'old', receivedAt: 1_500 }], skipped: [] } },
    ])
      .when({
        type: 'ClaimEmails',
        now: 3_000,
        emails: [
          { id: 'old', receivedAt: 1_500, matches: true },
          { id: 'new', receivedAt: 2_500, matches: true },
          { id: 'new', receivedAt: 2_500, matches: true },
          { id: 'spam', receivedAt: 2_500, matches: false },
          { id: 'before', receivedAt: 500, matches: true },
        ],
      })
      .then([
        {
          type: 'EmailsClaimed',
          data: {
            claimedAt: 3_000,
            claimed: [{ id: 'new', receivedAt: 2_500 }],
            skipped: [
              { id: 'spam', receivedAt: 2_500 },
              { id: 'before', receivedAt: 500 },
            ],
          },
        },
      ]);
  });

  it('a replica that lost the race decides nothing once it has read the winner', () => {
    const claimed: MailboxEvent = {
      type: 'EmailsClaimed',
      data: { claimedAt: 2_000, claimed: [{ id: 'a', receivedAt: 1_500 }], skipped: [] },
    };
    given([watching, claimed])
      .when({ type: 'ClaimEmails', now: 2_000, emails: [{ id: 'a', receivedAt: 1_500, matches: true }] })
      .then([]);
  });

  it('records a start once, only for a claimed email', () => {
    const claimed: MailboxEvent = {
      type: 'EmailsClaimed',
      data: { claimedAt: 2_000, claimed: [{ id: 'a', receivedAt: 1_500 }], skipped: [] },
    };
    const started: MailboxEvent = { type: 'EmailStarted', data: { id: 'a', executionId: 'e' } };
    given([watching, claimed]).when({ type: 'RecordStarted', id: 'a', executionId: 'e' }).then([started]);
    given([watching, claimed, started]).when({ type: 'RecordStarted', id: 'a', executionId: 'e' }).then([]);
    given([watching]).when({ type: 'RecordStarted', id: 'x', executionId: 'e' }).then([]);
  });

  it('drops only an unstarted claim; a dropped claim is never overdue again', () => {
    const claimed: MailboxEvent = {
      type: 'EmailsClaimed',
      data: { claimedAt: 2_000, claimed: [{ id: 'a', receivedAt: 1_500 }], skipped: [] },
    };
    const dropped: MailboxEvent = { type: 'ClaimDropped', data: { id: 'a', reason: 'gone' } };
    given([watching, claimed]).when({ type: 'DropClaim', id: 'a', reason: 'gone' }).then([dropped]);
    given([watching, claimed, { type: 'EmailStarted', data: { id: 'a', executionId: 'e' } }])
      .when({ type: 'DropClaim', id: 'a', reason: 'gone' })
      .then([]);
    expect(overdueClaims(state([watching, claimed, dropped]), 1e9, 10_000)).toEqual([]);
  });

  it('rule 7: records the poll time when mail was found or the last record is an overlap old; forgets ids below the window', () => {
    given([watching])
      .when({ type: 'FinishPoll', polledAt: 5_000, foundNew: false, overlapMs: 60_000 })
      .then([{ type: 'MailboxPolled', data: { polledAt: 5_000, forgetBefore: -56_000 } }]);
    const polled: MailboxEvent = { type: 'MailboxPolled', data: { polledAt: 5_000, forgetBefore: -56_000 } };
    given([watching, polled])
      .when({ type: 'FinishPoll', polledAt: 6_000, foundNew: false, overlapMs: 60_000 })
      .then([]);
    given([watching, polled])
      .when({ type: 'FinishPoll', polledAt: 6_000, foundNew: true, overlapMs: 60_000 })
      .then([{ type: 'MailboxPolled', data: { polledAt: 6_000, forgetBefore: -55_000 } }]);
  });

  it('forgets started and skipped ids older than the window, never an unstarted claim', () => {
    const after = state([
      watching,
      {
        type: 'EmailsClaimed',
        data: {
          claimedAt: 2_000,
          claimed: [
            { id: 'done', receivedAt: 1_500 },
            { id: 'pending', receivedAt: 1_500 },
          ],
          skipped: [{ id: 'spam', receivedAt: 1_500 }],
        },
      },
      { type: 'EmailStarted', data: { id: 'done', executionId: 'e' } },
      { type: 'MailboxPolled', data: { polledAt: 100_000, forgetBefore: 39_000 } },
    ]);
    expect([...after.known.keys()]).toEqual(['pending']);
    expect(after.lastPollAt).toBe(100_000);
  });

  it('asks the provider from the last poll less the overlap, never before the watch began', () => {
    expect(pollWindowStart(state([watching]), 5_000, 60_000)).toBe(1_000);
    const polled = state([watching, { type: 'MailboxPolled', data: { polledAt: 200_000, forgetBefore: 0 } }]);
    expect(pollWindowStart(polled, 250_000, 60_000)).toBe(140_000);
  });

  it('claims unstarted past the lease are overdue', () => {
    const claimed = state([
      watching,
      { type: 'EmailsClaimed', data: { claimedAt: 2_000, claimed: [{ id: 'a', receivedAt: 1_500 }], skipped: [] } },
    ]);
    expect(overdueClaims(claimed, 11_999, 10_000)).toEqual([]);
    expect(overdueClaims(claimed, 12_000, 10_000)).toEqual(['a']);
  });
});
