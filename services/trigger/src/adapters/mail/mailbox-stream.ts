import { WrongExpectedVersionError, type EventStore } from '@weft/event-store';
import { decideMailbox, type MailboxCommand } from '../../domain/mail/mailbox-decide.js';
import {
  evolveMailbox,
  initialMailboxState,
  MAILBOX_EVENT_TYPES,
  type MailboxEvent,
  type MailboxState,
} from '../../domain/mail/mailbox-events.js';

/** How often one command is re-decided after losing an append race before giving up. */
const MAX_CONFLICT_RETRIES = 20;

/**
 * A mail node's mailbox stream, held in memory and kept current: each command is decided on the
 * latest state and appended with its expected version; a replica that loses the race reads the
 * winner's events and decides again, so an email is claimed once.
 */
export class MailboxStream {
  private state: MailboxState = initialMailboxState();
  private version = 0;

  constructor(
    private readonly store: EventStore,
    readonly streamId: string,
    private readonly metadata: Record<string, string>,
  ) {}

  get current(): MailboxState {
    return this.state;
  }

  /** Reads the events appended since the last read (by this or another replica). */
  async catchUp(): Promise<void> {
    const events = await this.store.readStream(this.streamId, { fromVersion: this.version + 1 });
    for (const event of events) {
      if (MAILBOX_EVENT_TYPES.includes(event.type as MailboxEvent['type'])) {
        this.state = evolveMailbox(this.state, { type: event.type, data: event.data } as MailboxEvent);
      }
      this.version = event.streamVersion;
    }
  }

  /** Decides `command` on the newest state and appends its events; answers the events this call appended. */
  async execute(command: MailboxCommand): Promise<MailboxEvent[]> {
    for (let attempt = 0; ; attempt++) {
      const events = decideMailbox(command, this.state);
      if (events.length === 0) return [];
      let appended: number;
      try {
        const result = await this.store.append(
          this.streamId,
          events.map((event) => ({ ...event, metadata: this.metadata })),
          { expectedVersion: this.version === 0 ? 'no_stream' : this.version },
        );
        appended = result.nextExpectedVersion;
      } catch (error) {
        if (!(error instanceof WrongExpectedVersionError) || attempt >= MAX_CONFLICT_RETRIES) throw error;
        await this.catchUp();
        continue;
      }
      // The expected version held, so nothing came between: fold our own events.
      this.state = events.reduce(evolveMailbox, this.state);
      this.version = appended;
      return events;
    }
  }
}
