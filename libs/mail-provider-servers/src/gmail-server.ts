import type { ServerResponse } from 'node:http';
import type { FakeIdentity } from './fake-identity.js';
import { listenLocal, sendJson, type LocalServer } from './http-server.js';
import type { FakeEmail, FakeMailboxes } from './mailbox-fixtures.js';

const b64url = (text: string | Buffer): string => Buffer.from(text).toString('base64url');

const gmailError = (response: ServerResponse, status: number, message: string): void =>
  sendJson(response, status, {
    error: { code: status, message, status: status === 401 ? 'UNAUTHENTICATED' : 'ERROR' },
  });

const formatAddress = (address: { name?: string; address: string }): string =>
  address.name ? `"${address.name}" <${address.address}>` : address.address;

/** A Gmail API message resource (format=full): headers, multipart payload, base64url bodies. */
function messageResource(email: FakeEmail): Record<string, unknown> {
  const headers = [
    { name: 'From', value: formatAddress(email.from) },
    { name: 'To', value: email.to.join(', ') },
    ...(email.cc.length ? [{ name: 'Cc', value: email.cc.join(', ') }] : []),
    { name: 'Subject', value: email.subject },
    { name: 'Date', value: new Date(email.receivedAt).toUTCString() },
  ];
  const alternative = {
    partId: '0',
    mimeType: 'multipart/alternative',
    filename: '',
    headers: [],
    body: { size: 0 },
    parts: [
      {
        partId: '0.0',
        mimeType: 'text/plain',
        filename: '',
        headers: [],
        body: { size: email.text.length, data: b64url(email.text) },
      },
      {
        partId: '0.1',
        mimeType: 'text/html',
        filename: '',
        headers: [],
        body: { size: email.html.length, data: b64url(email.html) },
      },
    ],
  };
  const attachments = email.attachments.map((attachment, index) => ({
    partId: String(index + 1),
    mimeType: attachment.mimeType,
    filename: attachment.filename,
    headers: [{ name: 'Content-Disposition', value: `attachment; filename="${attachment.filename}"` }],
    body: { attachmentId: attachment.id, size: attachment.content.length },
  }));
  return {
    id: email.id,
    threadId: email.threadId,
    labelIds: email.folder === 'Inbox' ? ['INBOX', 'UNREAD'] : [email.folder.toUpperCase()],
    snippet: email.text.slice(0, 100),
    internalDate: String(email.receivedAt),
    sizeEstimate: email.text.length + email.html.length,
    payload: {
      partId: '',
      mimeType: 'multipart/mixed',
      filename: '',
      headers,
      body: { size: 0 },
      parts: [alternative, ...attachments],
    },
  };
}

/** Gmail search, the part Weft sends: `in:inbox`, `after:<epoch seconds>` (strictly later). */
function matchesQuery(email: FakeEmail, query: string): boolean {
  for (const term of query.split(/\s+/).filter(Boolean)) {
    const [key, value] = term.split(':');
    if (key === 'in' && value === 'inbox' && email.folder !== 'Inbox') return false;
    if (key === 'after' && email.receivedAt < (Number(value) + 1) * 1000) return false;
  }
  return true;
}

export interface GmailServerOptions {
  mailboxes: FakeMailboxes;
  identity: FakeIdentity;
  port?: number;
}

/** Gmail API root (`WEFT_GMAIL_API_URL`) and Google token endpoint (`WEFT_GOOGLE_TOKEN_URL`) on loopback. */
export interface GmailServer extends LocalServer {
  apiUrl: string;
  tokenUrl: string;
  authorizeUrl: string;
  /** Requests seen, for tests (`GET /gmail/v1/users/me/messages?...`). */
  requests: string[];
}

export async function startGmailServer(options: GmailServerOptions): Promise<GmailServer> {
  const { mailboxes, identity } = options;
  const requests: string[] = [];
  let tokenUrl = '';
  const server = await listenLocal((request, url, body, response) => {
    requests.push(`${request.method} ${url.pathname}${url.search}`);
    if (url.pathname === '/token' && request.method === 'POST') {
      return identity.token(new URLSearchParams(body.toString('utf8')), response, tokenUrl);
    }
    if (url.pathname === '/o/oauth2/v2/auth') {
      return identity.consent(url.searchParams, response);
    }
    const match =
      /^\/gmail\/v1\/users\/([^/]+)\/(messages|threads|profile)(?:\/([^/]+))?(?:\/attachments\/([^/]+))?$/.exec(
        url.pathname,
      );
    if (!match) return gmailError(response, 404, 'Not Found');
    const account = identity.authenticate(request.headers.authorization);
    if (!account) return gmailError(response, 401, 'Request had invalid authentication credentials.');
    if (identity.takeThrottle(response, { error: { code: 429, message: 'Too many concurrent requests for user.' } }))
      return;
    const user = decodeURIComponent(match[1]!);
    if (user !== 'me' && user.toLowerCase() !== account) return gmailError(response, 403, 'Delegation denied');
    const [, , kind, id, attachmentId] = match;
    const emails = mailboxes.list(account);
    if (kind === 'profile') {
      return sendJson(response, 200, {
        emailAddress: account,
        messagesTotal: emails.length,
        threadsTotal: emails.length,
        historyId: '1',
      });
    }
    if (kind === 'messages' && !id) {
      const query = url.searchParams.get('q') ?? '';
      const maxResults = Math.min(Number(url.searchParams.get('maxResults') ?? 100), 500);
      const offset = Number(url.searchParams.get('pageToken') ?? 0);
      const found = emails
        .filter((email) => matchesQuery(email, query))
        .sort((a, b) => b.receivedAt - a.receivedAt || b.id.localeCompare(a.id));
      const page = found.slice(offset, offset + maxResults);
      // Real Gmail omits `messages` from an empty answer.
      return sendJson(response, 200, {
        ...(page.length ? { messages: page.map((email) => ({ id: email.id, threadId: email.threadId })) } : {}),
        ...(offset + maxResults < found.length ? { nextPageToken: String(offset + maxResults) } : {}),
        resultSizeEstimate: found.length,
      });
    }
    if (kind === 'messages') {
      const email = mailboxes.find(account, id!);
      if (!email) return gmailError(response, 404, 'Requested entity was not found.');
      if (!attachmentId) return sendJson(response, 200, messageResource(email));
      const attachment = email.attachments.find((candidate) => candidate.id === attachmentId);
      if (!attachment) return gmailError(response, 404, 'Requested entity was not found.');
      return sendJson(response, 200, { size: attachment.content.length, data: b64url(attachment.content) });
    }
    const thread = emails.filter((email) => email.threadId === id).sort((a, b) => a.receivedAt - b.receivedAt);
    if (thread.length === 0) return gmailError(response, 404, 'Requested entity was not found.');
    return sendJson(response, 200, { id, messages: thread.map(messageResource) });
  }, options.port);
  tokenUrl = `${server.url}/token`;
  return { ...server, apiUrl: server.url, tokenUrl, authorizeUrl: `${server.url}/o/oauth2/v2/auth`, requests };
}
