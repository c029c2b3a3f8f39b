import { Client, HTTPMessageHandler, ResponseType } from '@microsoft/microsoft-graph-client';
import type { MailAttachmentInfo, MailMessage } from '../../domain/mail/mail-message.js';
import { GraphAuthMiddleware } from './graph-auth-middleware.js';
import type { MailboxClient, MessagePage } from './mailbox-client.js';
import { MailProviderError } from './mailbox-client.js';
import type { MicrosoftTokenSource } from './microsoft-token-source.js';
import { toMailProviderError } from './provider-errors.js';

export const DEFAULT_GRAPH_API_URL = 'https://graph.microsoft.com/v1.0';

interface GraphRecipient {
  emailAddress?: { address?: string; name?: string };
}

interface GraphMessage {
  id: string;
  conversationId?: string;
  receivedDateTime?: string;
  subject?: string;
  hasAttachments?: boolean;
  from?: GraphRecipient;
  toRecipients?: GraphRecipient[];
  ccRecipients?: GraphRecipient[];
  body?: { contentType?: string; content?: string };
}

interface GraphAttachment {
  '@odata.type'?: string;
  id: string;
  name?: string;
  size?: number;
  contentType?: string;
}

interface GraphList<T> {
  value?: T[];
  '@odata.nextLink'?: string;
}

/** Where a listing stands: which watched folder, and Graph's next link inside it. */
interface ListingPosition {
  folder: number;
  next?: string;
}

const PREFER_TEXT = 'outlook.body-content-type="text"';
const address = (recipient: GraphRecipient | undefined): string =>
  recipient?.emailAddress?.address?.toLowerCase() ?? '';

/**
 * Mail trigger B over Microsoft Graph (@microsoft/microsoft-graph-client): the signed-in user's
 * mailbox or a shared one, the inbox or named folders, `receivedDateTime` listings paged by
 * `@odata.nextLink`, attachments and conversations.
 */
export class GraphMailboxClient implements MailboxClient {
  private constructor(
    private readonly client: Client,
    private readonly baseUrl: string,
    private readonly root: string,
    readonly account: string,
    private readonly folderIds: string[],
    private readonly pageSize: number,
    private readonly now: () => number,
  ) {}

  static async open(options: {
    tokens: MicrosoftTokenSource;
    apiUrl: string;
    sharedMailbox?: string;
    folders: string[];
    pageSize: number;
    now: () => number;
  }): Promise<GraphMailboxClient> {
    const baseUrl = options.apiUrl.replace(/\/+$/, '');
    const middleware = new GraphAuthMiddleware(options.tokens);
    middleware.setNext(new HTTPMessageHandler());
    // baseUrl already carries the version: an empty defaultVersion keeps paths from doubling it.
    const client = Client.initWithMiddleware({ baseUrl, defaultVersion: '', middleware });
    const root = options.sharedMailbox ? `/users/${encodeURIComponent(options.sharedMailbox)}` : '/me';
    const call = <T>(request: () => Promise<T>): Promise<T> => callGraph(request, options.now);
    const account =
      options.sharedMailbox?.toLowerCase() ??
      (await call(async () => {
        const me = (await client.api('/me').select('mail,userPrincipalName').get()) as {
          mail?: string;
          userPrincipalName?: string;
        };
        return (me.mail ?? me.userPrincipalName ?? 'me').toLowerCase();
      }));
    const folderIds =
      options.folders.length === 0
        ? ['inbox']
        : await Promise.all(
            options.folders.map((name) =>
              call(async () => {
                const escaped = name.replaceAll("'", "''");
                const found = (await client
                  .api(`${root}/mailFolders`)
                  .filter(`displayName eq '${escaped}'`)
                  .get()) as GraphList<{ id: string }>;
                const id = found.value?.[0]?.id;
                if (!id) throw new MailProviderError(`outlook: no folder named ${name} in ${account}`, 404);
                return id;
              }),
            ),
          );
    return new GraphMailboxClient(client, baseUrl, root, account, folderIds, options.pageSize, options.now);
  }

  async listPage(afterMs: number, pageToken: string | undefined): Promise<MessagePage> {
    const position: ListingPosition = pageToken ? (JSON.parse(pageToken) as ListingPosition) : { folder: 0 };
    const request = position.next
      ? this.client.api(this.relative(position.next))
      : this.client
          .api(`${this.root}/mailFolders/${encodeURIComponent(this.folderIds[position.folder]!)}/messages`)
          .filter(`receivedDateTime ge ${new Date(afterMs).toISOString()}`)
          .orderby('receivedDateTime desc')
          .select('id')
          .top(this.pageSize);
    const answer = (await this.call(() => request.get())) as GraphList<{ id: string }>;
    const ids = (answer.value ?? []).map((message) => message.id);
    const next: ListingPosition | undefined = answer['@odata.nextLink']
      ? { folder: position.folder, next: answer['@odata.nextLink'] }
      : position.folder + 1 < this.folderIds.length
        ? { folder: position.folder + 1 }
        : undefined;
    return { ids, ...(next ? { nextPageToken: JSON.stringify(next) } : {}) };
  }

  async getMessage(id: string): Promise<MailMessage> {
    const path = `${this.root}/messages/${encodeURIComponent(id)}`;
    const html = (await this.call(() => this.client.api(path).get())) as GraphMessage;
    const text = (await this.call(() =>
      this.client.api(path).header('Prefer', PREFER_TEXT).select('body').get(),
    )) as GraphMessage;
    const attachments = html.hasAttachments ? await this.listAttachments(id) : [];
    return this.toMessage(html, text.body?.content ?? '', attachments);
  }

  async getThread(message: MailMessage): Promise<MailMessage[]> {
    const escaped = message.threadId.replaceAll("'", "''");
    const answer = (await this.call(() =>
      this.client
        .api(`${this.root}/messages`)
        .header('Prefer', PREFER_TEXT)
        .filter(`conversationId eq '${escaped}'`)
        .top(this.pageSize)
        .get(),
    )) as GraphList<GraphMessage>;
    return (answer.value ?? []).map((entry) => this.toMessage(entry, entry.body?.content ?? '', []));
  }

  async downloadAttachment(message: MailMessage, attachment: MailAttachmentInfo): Promise<Uint8Array> {
    const path = `${this.root}/messages/${encodeURIComponent(message.id)}/attachments/${encodeURIComponent(attachment.id)}/$value`;
    const bytes = (await this.call(() =>
      this.client.api(path).responseType(ResponseType.ARRAYBUFFER).get(),
    )) as ArrayBuffer;
    return new Uint8Array(bytes);
  }

  private async listAttachments(id: string): Promise<MailAttachmentInfo[]> {
    const answer = (await this.call(() =>
      this.client
        .api(`${this.root}/messages/${encodeURIComponent(id)}/attachments`)
        .select('id,name,size,contentType')
        .get(),
    )) as GraphList<GraphAttachment>;
    // Item and reference attachments have no bytes of their own to store.
    return (answer.value ?? [])
      .filter(
        (attachment) =>
          (attachment['@odata.type'] ?? '#microsoft.graph.fileAttachment') === '#microsoft.graph.fileAttachment',
      )
      .map((attachment) => ({
        id: attachment.id,
        name: attachment.name ?? 'attachment',
        size: attachment.size ?? 0,
        contentType: attachment.contentType ?? 'application/octet-stream',
      }));
  }

  private toMessage(resource: GraphMessage, text: string, attachments: MailAttachmentInfo[]): MailMessage {
    return {
      id: resource.id,
      threadId: resource.conversationId ?? '',
      sender: address(resource.from),
      recipients: (resource.toRecipients ?? []).map(address).filter(Boolean),
      cc: (resource.ccRecipients ?? []).map(address).filter(Boolean),
      subject: resource.subject ?? '',
      body: text,
      bodyHtml: resource.body?.contentType === 'html' ? (resource.body.content ?? '') : '',
      receivedAt: resource.receivedDateTime ? Date.parse(resource.receivedDateTime) : 0,
      attachments,
    };
  }

  /** A next link as a path under the base URL; a link to any other host is refused (it would get our token). */
  private relative(link: string): string {
    if (!link.startsWith(`${this.baseUrl}/`))
      throw new MailProviderError('outlook: next link outside the Graph base URL', undefined);
    return link.slice(this.baseUrl.length);
  }

  private call<T>(request: () => Promise<T>): Promise<T> {
    return callGraph(request, this.now);
  }
}

async function callGraph<T>(request: () => Promise<T>, now: () => number): Promise<T> {
  try {
    return await request();
  } catch (error) {
    throw toMailProviderError(error, 'outlook', now());
  }
}
