// Only googleapis' Gmail module: its main entry loads every Google API it wraps (about 950 files,
// 37 MB of source), which kept some 70 MiB of source text and compiled code in every Weft
// process. The package has no exports map; the version is pinned in pnpm-workspace.yaml.
import { gmail, type gmail_v1 } from 'googleapis/build/src/apis/gmail/index.js';
import type { OAuth2Client } from 'google-auth-library';
import { parseAddressList } from '../../domain/mail/address-list.js';
import { bareAddress } from '../../domain/mail/mail-filters.js';
import type { MailAttachmentInfo, MailMessage } from '../../domain/mail/mail-message.js';
import type { MailboxClient, MessagePage } from './mailbox-client.js';
import { toMailProviderError } from './provider-errors.js';

export const DEFAULT_GMAIL_API_URL = 'https://gmail.googleapis.com';

const decode = (data: string | null | undefined): string =>
  data ? Buffer.from(data, 'base64url').toString('utf8') : '';

function headerOf(part: gmail_v1.Schema$MessagePart | undefined, name: string): string | undefined {
  return part?.headers?.find((header) => header.name?.toLowerCase() === name.toLowerCase())?.value ?? undefined;
}

/** Walks a Gmail payload: the first text/plain and text/html bodies, and every part with a filename. */
function collectParts(
  part: gmail_v1.Schema$MessagePart | undefined,
  found: { text?: string; html?: string; attachments: MailAttachmentInfo[] },
): void {
  if (!part) return;
  if (part.filename && part.body?.attachmentId) {
    found.attachments.push({
      id: part.body.attachmentId,
      name: part.filename,
      size: part.body.size ?? 0,
      contentType: part.mimeType ?? 'application/octet-stream',
    });
  } else if (part.mimeType === 'text/plain' && found.text === undefined) {
    found.text = decode(part.body?.data);
  } else if (part.mimeType === 'text/html' && found.html === undefined) {
    found.html = decode(part.body?.data);
  }
  for (const child of part.parts ?? []) collectParts(child, found);
}

export function gmailMessage(resource: gmail_v1.Schema$Message): MailMessage {
  const found: { text?: string; html?: string; attachments: MailAttachmentInfo[] } = { attachments: [] };
  collectParts(resource.payload, found);
  return {
    id: resource.id ?? '',
    threadId: resource.threadId ?? '',
    sender: bareAddress(headerOf(resource.payload, 'From') ?? ''),
    recipients: parseAddressList(headerOf(resource.payload, 'To')),
    cc: parseAddressList(headerOf(resource.payload, 'Cc')),
    subject: headerOf(resource.payload, 'Subject') ?? '',
    body: found.text ?? '',
    bodyHtml: found.html ?? '',
    receivedAt: Number(resource.internalDate ?? 0),
    attachments: found.attachments,
  };
}

/**
 * Mail trigger A over the Gmail API (googleapis): `in:inbox after:<seconds>` listings, full
 * messages with their payload parts, attachments and threads of `user` ('me' or the impersonated address).
 */
export class GmailMailboxClient implements MailboxClient {
  private readonly gmail: gmail_v1.Gmail;

  private constructor(
    auth: OAuth2Client,
    apiUrl: string,
    private readonly user: string,
    readonly account: string,
    private readonly pageSize: number,
    private readonly now: () => number,
  ) {
    // googleapis joins paths onto rootUrl, which must end in a slash.
    // gaxios' own retries would ignore Retry-After and hammer a throttled mailbox: the poll loop waits instead.
    this.gmail = gmail({
      version: 'v1',
      auth,
      rootUrl: apiUrl.endsWith('/') ? apiUrl : `${apiUrl}/`,
      retry: false,
    });
  }

  static async open(options: {
    auth: OAuth2Client;
    apiUrl: string;
    /** The impersonated address (service account); absent for the OAuth user ('me'). */
    impersonated?: string;
    pageSize: number;
    now: () => number;
  }): Promise<GmailMailboxClient> {
    const user = options.impersonated ?? 'me';
    const probe = new GmailMailboxClient(options.auth, options.apiUrl, user, user, options.pageSize, options.now);
    if (options.impersonated) return probe;
    const profile = await probe.call(() => probe.gmail.users.getProfile({ userId: 'me' }));
    return new GmailMailboxClient(
      options.auth,
      options.apiUrl,
      user,
      profile.data.emailAddress ?? 'me',
      options.pageSize,
      options.now,
    );
  }

  async listPage(afterMs: number, pageToken: string | undefined): Promise<MessagePage> {
    const answer = await this.call(() =>
      this.gmail.users.messages.list({
        userId: this.user,
        // after: takes whole seconds: start a second early so the boundary second is never lost (ids dedupe).
        q: `in:inbox after:${Math.floor(afterMs / 1000) - 1}`,
        maxResults: this.pageSize,
        ...(pageToken ? { pageToken } : {}),
      }),
    );
    // Gmail leaves `messages` out of an empty answer.
    const ids = (answer.data.messages ?? []).map((message) => message.id).filter((id): id is string => !!id);
    return { ids, ...(answer.data.nextPageToken ? { nextPageToken: answer.data.nextPageToken } : {}) };
  }

  async getMessage(id: string): Promise<MailMessage> {
    const answer = await this.call(() => this.gmail.users.messages.get({ userId: this.user, id, format: 'full' }));
    return gmailMessage(answer.data);
  }

  async getThread(message: MailMessage): Promise<MailMessage[]> {
    const answer = await this.call(() =>
      this.gmail.users.threads.get({ userId: this.user, id: message.threadId, format: 'full' }),
    );
    return (answer.data.messages ?? []).map(gmailMessage);
  }

  async downloadAttachment(message: MailMessage, attachment: MailAttachmentInfo): Promise<Uint8Array> {
    const answer = await this.call(() =>
      this.gmail.users.messages.attachments.get({ userId: this.user, messageId: message.id, id: attachment.id }),
    );
    return Buffer.from(answer.data.data ?? '', 'base64url');
  }

  private async call<T>(request: () => Promise<T>): Promise<T> {
    try {
      return await request();
    } catch (error) {
      throw toMailProviderError(error, 'gmail', this.now());
    }
  }
}
