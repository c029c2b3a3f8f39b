import type { MailAttachmentInfo, MailMessage } from '../../domain/mail/mail-message.js';

/** One page of a provider listing of messages received after a time. */
export interface MessagePage {
  ids: string[];
  /** Absent on the last page. */
  nextPageToken?: string;
}

/** What the mail poller needs of a provider (Gmail API, Microsoft Graph). */
export interface MailboxClient {
  /** The `receiving_account` of every email it yields. */
  readonly account: string;
  /** Messages received after `afterMs` (epoch ms) in the watched folders, a page at a time. */
  listPage(afterMs: number, pageToken: string | undefined): Promise<MessagePage>;
  getMessage(id: string): Promise<MailMessage>;
  /** Every message of the email's conversation, the email included. */
  getThread(message: MailMessage): Promise<MailMessage[]>;
  downloadAttachment(message: MailMessage, attachment: MailAttachmentInfo): Promise<Uint8Array>;
}

/** A provider answer the poller must wait on or report (401 after refresh, 429, 5xx). */
export class MailProviderError extends Error {
  constructor(
    message: string,
    readonly status: number | undefined,
    /** From a 429's or 503's Retry-After header. */
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = 'MailProviderError';
  }
}

/** Retry-After as seconds or an HTTP date, in ms from `now`; undefined when absent or unreadable. */
export function retryAfterMs(header: string | null | undefined, now: number): number | undefined {
  if (!header) return undefined;
  const seconds = Number(header);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(at - now, 0);
}
