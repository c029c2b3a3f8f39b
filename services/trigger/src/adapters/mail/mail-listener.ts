import { blobKeyOf, filesUrlOf } from '@weft/blob-storage';
import type { ListenerContext, TriggerListener } from '../../application/listener-port.js';
import { systemClock, type Clock } from '../../application/clock.js';
import { emailMatches } from '../../domain/mail/mail-filters.js';
import {
  attachmentsToStore,
  emailOutput,
  type MailMessage,
  type StoredAttachment,
} from '../../domain/mail/mail-message.js';
import type { MailTriggerConfig } from '../../domain/mail/mail-trigger-config.js';
import { overdueClaims, pollWindowStart } from '../../domain/mail/mailbox-decide.js';
import { mailboxStreamId } from '../../domain/mail/mailbox-events.js';
import { nextPollDelay } from '../../domain/mail/poll-backoff.js';
import { MailProviderError, type MailboxClient } from './mailbox-client.js';
import { MailboxStream } from './mailbox-stream.js';

/** Timing of the poll loop; every value has a WEFT_MAIL_* variable (libs/config). */
export interface MailPollSettings {
  /** Ceiling of the backoff between polls (spec: 5 minutes). */
  maxPollIntervalMs: number;
  /** How far before the last poll time each query reaches, for mail the provider indexes late. */
  overlapMs: number;
  /** How long a claimed email may stay unstarted before another poll (any replica) fires it again. */
  claimLeaseMs: number;
  clock?: Clock;
}

/**
 * The poll loop of one gmail or outlook input node: list new mail, claim it on the mailbox
 * stream, store attachments, fire one execution per matching email, back off while idle.
 */
export class MailListener implements TriggerListener {
  private readonly stopping = new AbortController();
  private readonly clock: Clock;
  private readonly mailbox: MailboxStream;
  private client: MailboxClient | undefined;
  private loop: Promise<void> | undefined;
  private emptyPolls = 0;

  constructor(
    private readonly context: ListenerContext,
    private readonly config: MailTriggerConfig,
    private readonly connect: () => Promise<MailboxClient>,
    private readonly settings: MailPollSettings,
  ) {
    this.clock = settings.clock ?? systemClock;
    this.mailbox = new MailboxStream(context.store, mailboxStreamId(context.processId, context.nodeId), {
      organizationId: context.organizationId,
    });
    context.signal.addEventListener('abort', () => this.stopping.abort(), { once: true });
  }

  async start(): Promise<void> {
    this.context.report({ state: 'starting' });
    // Refusals (a service-account target outside its allowed list, a missing connection) fail the start.
    this.client = await this.connect();
    await this.mailbox.catchUp();
    await this.mailbox.execute({ type: 'StartWatching', now: this.now() });
    this.loop = this.run(this.client);
  }

  async stop(): Promise<void> {
    this.stopping.abort();
    await this.loop;
    this.context.report({ state: 'stopped', nextRunAt: null });
  }

  private now(): number {
    return this.clock.now().getTime();
  }

  private async run(client: MailboxClient): Promise<void> {
    while (!this.stopping.signal.aborted) {
      const delay = await this.pollAndPlan(client);
      if (this.stopping.signal.aborted) return;
      const at = new Date(this.now() + delay);
      this.context.report({ nextRunAt: at.toISOString() });
      await this.clock.sleepUntil(at, this.stopping.signal);
    }
  }

  /** One poll; answers the wait before the next one. Errors are reported and retried later (spec "Events"). */
  private async pollAndPlan(client: MailboxClient): Promise<number> {
    const backoff = { initialMs: this.config.pollingIntervalMs, maxMs: this.settings.maxPollIntervalMs };
    try {
      const started = await this.poll(client);
      this.emptyPolls = started > 0 ? 0 : this.emptyPolls + 1;
      const delay = nextPollDelay(this.emptyPolls, backoff);
      this.context.report({
        state: delay > backoff.initialMs ? 'backing_off' : 'listening',
        lastSuccessAt: new Date(this.now()).toISOString(),
        lastError: null,
      });
      return delay;
    } catch (error) {
      if (this.stopping.signal.aborted) return 0;
      this.emptyPolls += 1;
      const message = error instanceof Error ? error.message : String(error);
      this.context.report({ state: 'failing', lastError: { message, at: new Date(this.now()).toISOString() } });
      const wait = error instanceof MailProviderError ? error.retryAfterMs : undefined;
      return nextPollDelay(this.emptyPolls, backoff, wait);
    }
  }

  /** Answers how many executions this poll started. */
  private async poll(client: MailboxClient): Promise<number> {
    const polledAt = this.now();
    await this.mailbox.catchUp();
    let started = await this.refireOverdue(client, polledAt);
    const after = pollWindowStart(this.mailbox.current, polledAt, this.settings.overlapMs);
    let pageToken: string | undefined;
    do {
      const page = await client.listPage(after, pageToken);
      started += await this.handlePage(client, page.ids, polledAt);
      pageToken = page.nextPageToken;
    } while (pageToken !== undefined && !this.stopping.signal.aborted);
    await this.mailbox.execute({
      type: 'FinishPoll',
      polledAt,
      foundNew: started > 0,
      overlapMs: this.settings.overlapMs,
    });
    return started;
  }

  private async handlePage(client: MailboxClient, ids: string[], polledAt: number): Promise<number> {
    const unknown = ids.filter((id) => !this.mailbox.current.known.has(id));
    if (unknown.length === 0) return 0;
    const messages: MailMessage[] = [];
    for (const id of unknown) messages.push(await client.getMessage(id));
    messages.sort((a, b) => a.receivedAt - b.receivedAt || a.id.localeCompare(b.id));
    const events = await this.mailbox.execute({
      type: 'ClaimEmails',
      now: polledAt,
      emails: messages.map((message) => ({
        id: message.id,
        receivedAt: message.receivedAt,
        matches: emailMatches(message, this.config.filters),
      })),
    });
    // Only what this replica's own append claimed is fired here; a lost race claimed nothing.
    const claimed = new Set(
      events.flatMap((event) => (event.type === 'EmailsClaimed' ? event.data.claimed : [])).map((e) => e.id),
    );
    let started = 0;
    for (const message of messages) {
      if (this.stopping.signal.aborted) break;
      if (!claimed.has(message.id)) continue;
      await this.startExecution(client, message);
      started += 1;
    }
    return started;
  }

  /** Claims left unstarted by a crash (here or on another replica) are fired again; the id dedupes. */
  private async refireOverdue(client: MailboxClient, now: number): Promise<number> {
    let started = 0;
    for (const id of overdueClaims(this.mailbox.current, now, this.settings.claimLeaseMs)) {
      if (this.stopping.signal.aborted) break;
      const message = await client.getMessage(id).catch((error: unknown) => {
        // Deleted since its claim: nothing left to start, and it must not fail every later poll.
        if (error instanceof MailProviderError && error.status === 404) return undefined;
        throw error;
      });
      if (!message) {
        await this.mailbox.execute({ type: 'DropClaim', id, reason: 'the email no longer exists' });
        continue;
      }
      await this.startExecution(client, message);
      started += 1;
    }
    return started;
  }

  private async startExecution(client: MailboxClient, message: MailMessage): Promise<void> {
    const attachments = await this.storeAttachments(client, message);
    const thread = this.config.includeThread ? await client.getThread(message) : undefined;
    const output = emailOutput(message, client.account, attachments, thread);
    const { executionId } = await this.context.fire(output, { dedupeKey: message.id });
    await this.mailbox.execute({ type: 'RecordStarted', id: message.id, executionId });
  }

  private async storeAttachments(client: MailboxClient, message: MailMessage): Promise<StoredAttachment[]> {
    const stored: StoredAttachment[] = [];
    for (const attachment of attachmentsToStore(message, this.config.attachmentMaxSize)) {
      const bytes = await client.downloadAttachment(message, attachment);
      // The listed size is the provider's word; the bytes decide.
      if (bytes.byteLength > this.config.attachmentMaxSize) continue;
      const reference = await this.context.storeFile(attachment.name, bytes, attachment.contentType);
      // The download address (an org key reads it); downstream nodes resolve it to the same blob.
      stored.push({
        name: attachment.name,
        url: filesUrlOf(blobKeyOf(reference.url)),
        size: bytes.byteLength,
        contentType: reference.contentType ?? attachment.contentType,
      });
    }
    return stored;
  }
}
