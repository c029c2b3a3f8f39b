import type { ServerResponse } from 'node:http';
import type { FakeIdentity } from './fake-identity.js';
import { listenLocal, sendJson, type LocalServer } from './http-server.js';
import type { FakeEmail, FakeMailboxes } from './mailbox-fixtures.js';

const graphError = (response: ServerResponse, status: number, code: string, message: string): void =>
  sendJson(response, status, { error: { code, message } });

const folderId = (name: string): string => `folder-${name.toLowerCase().replaceAll(/[^a-z0-9]+/g, '-')}`;

const recipient = (address: string): { emailAddress: { name: string; address: string } } => ({
  emailAddress: { name: address, address },
});

/** A Graph message resource; the body is HTML unless the caller prefers text (as Graph does). */
function messageResource(email: FakeEmail, preferText: boolean): Record<string, unknown> {
  return {
    '@odata.etag': `W/"${email.id}"`,
    id: email.id,
    conversationId: email.threadId,
    receivedDateTime: new Date(email.receivedAt).toISOString().replace(/\.\d{3}Z$/, 'Z'),
    subject: email.subject,
    hasAttachments: email.attachments.length > 0,
    parentFolderId: folderId(email.folder),
    from: { emailAddress: { name: email.from.name ?? email.from.address, address: email.from.address } },
    sender: { emailAddress: { name: email.from.name ?? email.from.address, address: email.from.address } },
    toRecipients: email.to.map(recipient),
    ccRecipients: email.cc.map(recipient),
    body: preferText ? { contentType: 'text', content: email.text } : { contentType: 'html', content: email.html },
  };
}

/** The `$filter` forms Weft sends: `receivedDateTime ge|gt <ISO>` and `conversationId eq '<id>'`. */
function filterPredicate(filter: string | null): ((email: FakeEmail) => boolean) | 'invalid' {
  if (!filter) return () => true;
  const received = /^receivedDateTime (ge|gt) (\S+)$/.exec(filter.trim());
  if (received) {
    const at = Date.parse(received[2]!);
    if (Number.isNaN(at)) return 'invalid';
    return received[1] === 'ge' ? (email) => email.receivedAt >= at : (email) => email.receivedAt > at;
  }
  const conversation = /^conversationId eq '([^']*)'$/.exec(filter.trim());
  if (conversation) return (email) => email.threadId === conversation[1];
  return 'invalid';
}

export interface GraphServerOptions {
  mailboxes: FakeMailboxes;
  identity: FakeIdentity;
  port?: number;
}

/** Graph root (`WEFT_GRAPH_API_URL`, with /v1.0) and Microsoft token endpoint (`WEFT_MICROSOFT_TOKEN_URL`). */
export interface GraphServer extends LocalServer {
  graphUrl: string;
  /** Holds `<tenant>`, replaced by the client. */
  tokenUrl: string;
  authorizeUrl: string;
  requests: string[];
}

export async function startGraphServer(options: GraphServerOptions): Promise<GraphServer> {
  const { mailboxes, identity } = options;
  const requests: string[] = [];
  let base = '';
  const server = await listenLocal((request, url, body, response) => {
    requests.push(`${request.method} ${url.pathname}${url.search}`);
    const oauth = /^\/([^/]+)\/oauth2\/v2\.0\/(token|authorize)$/.exec(url.pathname);
    if (oauth?.[2] === 'token' && request.method === 'POST') {
      return identity.token(new URLSearchParams(body.toString('utf8')), response, `${base}${url.pathname}`);
    }
    if (oauth?.[2] === 'authorize') {
      return identity.consent(url.searchParams, response);
    }
    const route = /^\/v1\.0\/(?:me|users\/([^/]+))(?:\/(.*))?$/.exec(url.pathname);
    if (!route) return graphError(response, 404, 'ResourceNotFound', 'Resource not found for the segment.');
    const account = identity.authenticate(request.headers.authorization);
    if (!account)
      return graphError(response, 401, 'InvalidAuthenticationToken', 'Access token has expired or is not yet valid.');
    if (
      identity.takeThrottle(response, {
        error: { code: 'TooManyRequests', message: 'Application is over its MailboxConcurrency limit.' },
      })
    ) {
      return;
    }
    const mailbox = route[1] ? decodeURIComponent(route[1]).toLowerCase() : account;
    if (!identity.canOpen(account, mailbox)) return graphError(response, 403, 'ErrorAccessDenied', 'Access is denied.');
    const emails = mailboxes.list(mailbox);
    if (route[2] === undefined)
      return sendJson(response, 200, { id: mailbox, mail: mailbox, userPrincipalName: mailbox });
    const rest = route[2].split('/').map(decodeURIComponent);
    const preferText = /outlook\.body-content-type="text"/.test(String(request.headers.prefer ?? ''));

    if (rest[0] === 'mailFolders' && rest.length === 1) {
      const names = [...new Set(['Inbox', ...emails.map((email) => email.folder)])];
      const wanted = /^displayName eq '([^']*)'$/.exec(url.searchParams.get('$filter') ?? '')?.[1];
      const value = names
        .filter((name) => wanted === undefined || name === wanted)
        .map((name) => ({ id: folderId(name), displayName: name }));
      return sendJson(response, 200, { value });
    }
    const listing =
      (rest[0] === 'mailFolders' && rest[2] === 'messages' && rest.length === 3) ||
      (rest[0] === 'messages' && rest.length === 1);
    if (listing) {
      const folder = rest[0] === 'mailFolders' ? (rest[1] === 'inbox' ? folderId('Inbox') : rest[1]) : undefined;
      const predicate = filterPredicate(url.searchParams.get('$filter'));
      if (predicate === 'invalid') return graphError(response, 400, 'BadRequest', 'Invalid filter clause');
      const top = Math.min(Number(url.searchParams.get('$top') ?? 10), 1000);
      const skip = Number(url.searchParams.get('$skip') ?? 0);
      const ascending = /receivedDateTime asc/.test(url.searchParams.get('$orderby') ?? '');
      const found = emails
        .filter((email) => (folder === undefined || folderId(email.folder) === folder) && predicate(email))
        .sort(
          (a, b) => (ascending ? a.receivedAt - b.receivedAt : b.receivedAt - a.receivedAt) || a.id.localeCompare(b.id),
        );
      const page = found.slice(skip, skip + top);
      const next = new URL(`${base}${url.pathname}${url.search}`);
      next.searchParams.set('$skip', String(skip + top));
      return sendJson(response, 200, {
        '@odata.context': `${base}/v1.0/$metadata#Collection(microsoft.graph.message)`,
        value: page.map((email) => messageResource(email, preferText)),
        ...(skip + top < found.length ? { '@odata.nextLink': next.toString() } : {}),
      });
    }
    if (rest[0] === 'messages' && rest[1]) {
      const email = emails.find((candidate) => candidate.id === rest[1]);
      if (!email)
        return graphError(response, 404, 'ErrorItemNotFound', 'The specified object was not found in the store.');
      if (rest.length === 2) return sendJson(response, 200, messageResource(email, preferText));
      if (rest[2] === 'attachments' && rest.length === 3) {
        return sendJson(response, 200, {
          value: email.attachments.map((attachment) => ({
            '@odata.type': '#microsoft.graph.fileAttachment',
            id: attachment.id,
            name: attachment.filename,
            contentType: attachment.mimeType,
            size: attachment.content.length,
            isInline: false,
          })),
        });
      }
      const attachment = email.attachments.find((candidate) => candidate.id === rest[3]);
      if (rest[2] === 'attachments' && attachment && rest[4] === '$value' && rest.length === 5) {
        response.writeHead(200, { 'content-type': attachment.mimeType }).end(attachment.content);
        return;
      }
      return graphError(response, 404, 'ErrorItemNotFound', 'The specified object was not found in the store.');
    }
    return graphError(response, 400, 'BadRequest', `Unsupported segment ${rest.join('/')}`);
  }, options.port);
  base = server.url;
  return {
    ...server,
    graphUrl: `${server.url}/v1.0`,
    tokenUrl: `${server.url}/<tenant>/oauth2/v2.0/token`,
    authorizeUrl: `${server.url}/<tenant>/oauth2/v2.0/authorize`,
    requests,
  };
}
