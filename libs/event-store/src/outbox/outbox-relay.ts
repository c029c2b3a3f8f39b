import { eventSubject, type PublishedEventEnvelope } from '@weft/contracts';
import type { StoredEvent } from '../event-store.js';
import type { PostgresEventStore } from '../adapters/postgres/postgres-event-store.js';
import { appendedJsonOf } from '../adapters/postgres/appended-json.js';
import { CatchUpLoop } from '../subscriptions/catch-up-loop.js';
import { advanceCheckpoint, loadCheckpoint } from '../subscriptions/checkpoint-table.js';
import {
  eventMessageId,
  eventMessageOf,
  PermanentPublishError,
  type EventMessage,
  type EventPublisher,
  type PublishOutcome,
} from './event-publisher.js';
import { minimalPlaceholderEnvelope, placeholderEnvelope } from './placeholder-envelope.js';
import { InProcessLock, SessionAdvisoryLock, type LeaderLock } from './leader-lock.js';

/** First key of the relay's leader lock; the second is the events table's oid. */
export const RELAY_LOCK_NAMESPACE = 0x5745_4652; // 'WEFR'

export interface OutboxRelayOptions {
  /** Checkpoint name in subscription_checkpoints; default 'outbox-relay'. */
  name?: string;
  batchSize?: number;
  /** Polling interval when caught up; appends in this process and NOTIFY wake it sooner. */
  pollMs?: number;
  /** How often a standby instance tries to take over. */
  standbyMs?: number;
  /** Least time between two checkpoint writes while publishing (the last one is written at stop); default 1 s. */
  checkpointEveryMs?: number;
  /** Subject of an event; default `eventSubject` from @weft/contracts. */
  subjectFor?: (event: StoredEvent) => string;
  onError?: (error: unknown) => void;
  /** Called when an event could never be published and a placeholder took its position. */
  onPlaceholder?: (event: StoredEvent, reason: string) => void;
}

export const toEnvelope = (event: StoredEvent): PublishedEventEnvelope => ({
  eventId: event.eventId,
  streamId: event.streamId,
  streamVersion: event.streamVersion,
  position: event.position,
  type: event.type,
  schemaVersion: event.schemaVersion,
  data: event.data,
  metadata: event.metadata,
  recordedAt: event.recordedAt.toISOString(),
});

/**
 * `JSON.stringify(toEnvelope(event))`, with the data and metadata texts the append sent to the
 * database when this process appended the event and a started relay could publish it then
 * (`PostgresEventStore.keepAppendedJsonFor`), or a read got them: no second encoding of a run's
 * values.
 */
export function envelopeJson(event: StoredEvent): string {
  const appended = appendedJsonOf(event);
  if (!appended) return JSON.stringify(toEnvelope(event));
  return `{"eventId":${JSON.stringify(event.eventId)},"streamId":${JSON.stringify(event.streamId)},"streamVersion":${JSON.stringify(event.streamVersion)},"position":${JSON.stringify(event.position)},"type":${JSON.stringify(event.type)},"schemaVersion":${JSON.stringify(event.schemaVersion)},"data":${appended.data},"metadata":${appended.metadata},"recordedAt":${JSON.stringify(event.recordedAt.toISOString())}}`;
}

const messageOf = (event: StoredEvent): EventMessage => ({ position: event.position, json: envelopeJson(event) });

/**
 * Publishes every committed event, in position order, exactly once per position: it reads only
 * committed events (never publishes a rolled-back one), resumes after the later of its checkpoint
 * and the destination's last stored position (a crash between publish and checkpoint repeats
 * nothing), and the message id deduplicates whatever slips through. One instance leads; others
 * stand by until its lock is released.
 */
export class OutboxRelay {
  private readonly loop: CatchUpLoop;
  private readonly lock: LeaderLock;
  private readonly name: string;
  private started = false;
  /** Position published but not yet saved as the checkpoint, and when the last save was. */
  private unsaved: number | undefined;
  private savedAt = 0;
  /** Saves one after the other: an older position written last would move the checkpoint back. */
  private saving: Promise<void> = Promise.resolve();
  /** Saves what the last batches published once the interval is up, if no batch came to do it. */
  private trailingSave: NodeJS.Timeout | undefined;
  /** What this relay may publish, for the store's appends (`keepAppendedJsonFor`), and how to stop telling it. */
  private readonly publishable: (event: StoredEvent) => boolean;
  private stopKeepingJson: (() => void) | undefined;
  private stopped = false;

  constructor(
    private readonly store: PostgresEventStore,
    publisher: EventPublisher,
    private readonly options: OutboxRelayOptions = {},
  ) {
    const name = (this.name = options.name ?? 'outbox-relay');
    const checkpointEveryMs = options.checkpointEveryMs ?? 1000;
    const subjectFor = options.subjectFor ?? eventSubject;
    // Events it will pass over (the one-at-a-time path below) need not keep their appended JSON for it.
    const interested = publisher.enforcesPreviousMsgId ? undefined : publisher.interested?.bind(publisher);
    this.publishable = interested ? (event) => interested(subjectFor(event)) : () => true;
    let previousMsgId: string | undefined;
    const lock = (this.lock =
      store.database.dialect === 'postgres'
        ? new SessionAdvisoryLock(store.database, [RELAY_LOCK_NAMESPACE, store.eventsTableOid])
        : new InProcessLock(store.database, name));
    // An event that can never be published (too large) must not stall every later one: its
    // position gets a small placeholder that says why, and the relay goes on.
    const publishOne = async (event: StoredEvent, previous: string | undefined): Promise<PublishOutcome> => {
      const msgId = eventMessageId(event.position);
      const message = messageOf(event);
      try {
        return await publisher.publish(subjectFor(event), message, msgId, previous);
      } catch (error) {
        if (!(error instanceof PermanentPublishError)) throw error;
        const envelope = toEnvelope(event);
        // The database's JSON text is spaced (`{"a": 1}`): encoded compactly, the event may fit.
        const compact = JSON.stringify(envelope);
        if (compact.length < message.json.length) {
          try {
            return await publisher.publish(
              subjectFor(event),
              { position: event.position, json: compact },
              msgId,
              previous,
            );
          } catch (compactError) {
            if (!(compactError instanceof PermanentPublishError)) throw compactError;
          }
        }
        let outcome: PublishOutcome;
        try {
          outcome = await publisher.publish(
            subjectFor(event),
            eventMessageOf(placeholderEnvelope(envelope, error.message)),
            msgId,
            previous,
          );
        } catch (placeholderError) {
          // A stream's own max_msg_size may refuse the placeholder's metadata and reason too.
          if (!(placeholderError instanceof PermanentPublishError)) throw placeholderError;
          const minimal = minimalPlaceholderEnvelope(envelope, error.message);
          outcome = await publisher.publish(subjectFor(event), eventMessageOf(minimal), msgId, previous);
        }
        // Only once it is published: a retried position must not be reported again and again.
        options.onPlaceholder?.(event, error.message);
        return outcome;
      }
    };
    // Pipelined, each message naming its predecessor: a failed publish fails all later ones of the
    // batch, so nothing overtakes it. A transient failure ends the batch (the loop resumes from the
    // destination's last); a permanent one is replaced by its placeholder and the rest is re-sent.
    const publishPipelined = async (
      batch: StoredEvent[],
      previous: string | undefined,
    ): Promise<string | undefined> => {
      let last = previous;
      const publishes = batch.map((event) => {
        const msgId = eventMessageId(event.position);
        const published = publisher.publish(subjectFor(event), messageOf(event), msgId, last);
        last = msgId;
        return published;
      });
      const results = await Promise.allSettled(publishes);
      const failedAt = results.findIndex((result) => result.status === 'rejected');
      if (failedAt === -1) return last;
      const reason = (results[failedAt] as PromiseRejectedResult).reason as unknown;
      if (!(reason instanceof PermanentPublishError)) throw reason;
      const before = failedAt === 0 ? previous : eventMessageId((batch[failedAt - 1] as StoredEvent).position);
      const failed = batch[failedAt] as StoredEvent;
      await publishOne(failed, before);
      return publishPipelined(batch.slice(failedAt + 1), eventMessageId(failed.position));
    };
    // After a failed chain, the next batch is published acknowledged message by message, so the
    // error that broke it is reported as itself, not as its successor's refusal.
    let acknowledgeEach = false;
    // Sent unacknowledged up to the batch's last message, each naming its predecessor: the stream
    // stores the last only if its predecessor is the stream's last message, and that one only if
    // its own was, so the last one's acknowledgement confirms the whole chain. A failure anywhere
    // fails the last; the loop then resumes from the destination's last message.
    const publishChained = async (
      batch: StoredEvent[],
      previous: string | undefined,
      send: NonNullable<EventPublisher['send']>,
    ): Promise<string | undefined> => {
      let last = previous;
      for (const [index, event] of batch.slice(0, -1).entries()) {
        const msgId = eventMessageId(event.position);
        try {
          send(subjectFor(event), messageOf(event), msgId, last);
        } catch (error) {
          if (!(error instanceof PermanentPublishError)) throw error;
          // Its placeholder's acknowledgement confirms the messages sent before it.
          await publishOne(event, last);
          return publishChained(batch.slice(index + 1), msgId, send);
        }
        last = msgId;
      }
      const final = batch.at(-1);
      if (!final) return last;
      try {
        // A duplicate is acknowledged before any expectation is checked: it confirms nothing sent before it.
        const { duplicate } = await publishOne(final, last);
        if (duplicate)
          throw new Error(`${eventMessageId(final.position)} was stored already: the batch is unconfirmed`);
      } catch (error) {
        acknowledgeEach = true;
        throw error;
      }
      return eventMessageId(final.position);
    };
    this.loop = new CatchUpLoop({
      store,
      // This process's own appends are published as committed, without reading them back.
      committed: store.committed,
      // What it reads is published as the database's JSON text, not decoded and encoded again.
      jsonText: true,
      batchSize: options.batchSize ?? 500,
      pollMs: options.pollMs ?? 200,
      // A standby retries the leader lock at this pace (the loop reloads its checkpoint after a failure).
      retryMs: options.standbyMs ?? 1000,
      onError: (error) => {
        if (!(error instanceof StandingByError)) options.onError?.(error);
      },
      loadCheckpoint: async () => {
        if (!(await lock.tryAcquire())) throw new StandingByError();
        // Only the leader reads the table, so only it follows other processes' appends: every
        // listening connection is woken by every commit (distributed, one per service). Not
        // awaited: the first read comes after the lock anyway, and once listening the store asks
        // for one more read, so nothing committed in between waits for a poll; a connection that
        // is slow to open must not keep the leader from publishing.
        void this.store.listenForAppends();
        const [saved, published] = await Promise.all([
          loadCheckpoint(store.db, 'subscription_checkpoints', name),
          publisher.lastPublishedPosition(),
        ]);
        // The chain of expected predecessors starts at the destination's last message, if it is ours.
        previousMsgId = published > 0 && published >= saved ? eventMessageId(published) : undefined;
        return Math.max(saved, published);
      },
      handleBatch: async (events, reached, taken) => {
        // A leader whose lock connection died stops at once; it resumes only after winning again.
        if (!lock.isHeld()) throw new StandingByError();
        if (publisher.enforcesPreviousMsgId && publisher.send && !acknowledgeEach) {
          previousMsgId = await publishChained(events, previousMsgId, publisher.send.bind(publisher));
        } else if (publisher.enforcesPreviousMsgId) {
          previousMsgId = await publishPipelined(events, previousMsgId);
          acknowledgeEach = false;
        } else {
          // One at a time: without the predecessor check, a failed publish must not be overtaken.
          for (const event of events) {
            if (publisher.interested?.(subjectFor(event)) === false) continue;
            // This process's append kept no text for it (no taker then): its data objects are the
            // appender's own and may have changed since, so it goes out as the database holds it.
            const stored = taken && !appendedJsonOf(event) ? await this.readBack(event) : event;
            await publishOne(stored, undefined);
          }
        }
        // Not a commit per batch: a restart resumes after the destination's last message anyway,
        // so a checkpoint behind it only costs a re-check, never a repeat.
        this.unsaved = reached;
        const sinceSaved = Date.now() - this.savedAt;
        if (sinceSaved >= checkpointEveryMs) await this.saveCheckpoint();
        else this.saveLater(checkpointEveryMs - sinceSaved);
      },
    });
  }

  private async readBack(event: StoredEvent): Promise<StoredEvent> {
    const [stored] = await this.store.readAll({
      fromPosition: event.position - 1,
      toPosition: event.position,
      jsonText: true,
    });
    // Committed, so it is there; the event in hand is the fallback all the same.
    return stored ?? event;
  }

  /**
   * Without it, a checkpoint left behind by the last burst stays behind while no event comes: a
   * restart after the stream lost its messages (purged, expired by age) would publish that
   * burst's tail again.
   */
  private saveLater(ms: number): void {
    this.trailingSave ??= setTimeout(() => {
      this.trailingSave = undefined;
      if (this.lock.isHeld()) this.saveCheckpoint().catch((error: unknown) => this.options.onError?.(error));
    }, ms).unref();
  }

  private saveCheckpoint(): Promise<void> {
    const saved = this.saving.then(() => this.writeCheckpoint());
    this.saving = saved.catch(() => undefined);
    return saved;
  }

  private async writeCheckpoint(): Promise<void> {
    if (this.unsaved === undefined) return;
    const position = this.unsaved;
    await advanceCheckpoint(this.store.db, 'subscription_checkpoints', this.name, position);
    this.savedAt = Date.now();
    if (this.unsaved === position) this.unsaved = undefined;
  }

  /** True while this instance holds the leader lock and publishes. */
  get isLeader(): boolean {
    return this.started && this.lock.isHeld();
  }

  /** Position published so far by this instance. */
  get position(): number {
    return this.loop.position;
  }

  start(): void {
    if (this.started) return;
    // Its loop cannot run again, and appends must not drop texts for a relay that never runs.
    if (this.stopped) throw new Error(`the outbox relay ${this.name} was stopped: start a new one`);
    this.started = true;
    this.stopKeepingJson = this.store.keepAppendedJsonFor(this.publishable);
    this.loop.start();
  }

  waitForPosition(position: number): Promise<void> {
    return this.loop.waitForPosition(position);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    // First: the appends from now on keep their texts as if this relay were never started.
    this.stopKeepingJson?.();
    this.stopKeepingJson = undefined;
    await this.loop.stop();
    clearTimeout(this.trailingSave);
    this.trailingSave = undefined;
    if (this.lock.isHeld()) await this.saveCheckpoint().catch((error: unknown) => this.options.onError?.(error));
    await this.lock.release();
    this.started = false;
  }
}

/** Another instance leads; this one waits for its lock. */
class StandingByError extends Error {
  override name = 'StandingByError';
}
