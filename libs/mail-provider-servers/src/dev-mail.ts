import { FakeIdentity } from './fake-identity.js';
import { startGmailServer } from './gmail-server.js';
import { startGraphServer } from './graph-server.js';
import { listenLocal, sendJson } from './http-server.js';
import { FakeMailboxes } from './mailbox-fixtures.js';

/**
 * `pnpm dev:mail`: local Gmail and Graph servers on loopback, for trying the mail triggers
 * without an account. Prints the WEFT_* variables and the connection data to use; POST an email
 * to the delivery endpoint and the next poll picks it up.
 */
const port = (name: string, fallback: number): number => Number(process.env[name] ?? fallback);
const CLIENT_ID = 'weft-dev-client';
const CLIENT_SECRET = 'weft-dev-secret';
const ACCOUNT = process.env.WEFT_DEV_MAIL_ACCOUNT ?? 'dev@example.test';

const mailboxes = new FakeMailboxes();
const identity = new FakeIdentity();
identity.registerClient(CLIENT_ID, CLIENT_SECRET);
identity.defaultAccount = ACCOUNT;
const gmail = await startGmailServer({ mailboxes, identity, port: port('WEFT_DEV_MAIL_GMAIL_PORT', 7301) });
const graph = await startGraphServer({ mailboxes, identity, port: port('WEFT_DEV_MAIL_GRAPH_PORT', 7302) });
const delivery = await listenLocal(
  async (request, url, body, response) => {
    if (request.method !== 'POST' || url.pathname !== '/messages')
      return sendJson(response, 404, { error: 'POST /messages' });
    let email: { to?: string; from?: string; subject?: string; text?: string; html?: string; folder?: string };
    try {
      email = JSON.parse(body.toString('utf8') || '{}') as typeof email;
    } catch {
      return sendJson(response, 400, { error: 'the body must be JSON' });
    }
    const delivered = mailboxes.deliver(email.to ?? ACCOUNT, {
      from: email.from ?? 'sender@example.test',
      subject: email.subject ?? 'Hello from pnpm dev:mail',
      text: email.text ?? 'A test email.',
      html: email.html ?? `<p>${email.text ?? 'A test email.'}</p>`,
      ...(email.folder ? { folder: email.folder } : {}),
    });
    sendJson(response, 201, { id: delivered.id, to: email.to ?? ACCOUNT });
  },
  port('WEFT_DEV_MAIL_DELIVERY_PORT', 7303),
);

const gmailRefresh = identity.issueRefreshToken(CLIENT_ID, ACCOUNT);
const outlookRefresh = identity.issueRefreshToken(CLIENT_ID, ACCOUNT);
const lines = [
  'Local mail providers are running. Start Weft with:',
  '',
  `  export WEFT_GMAIL_API_URL=${gmail.apiUrl}`,
  `  export WEFT_GOOGLE_TOKEN_URL=${gmail.tokenUrl}`,
  `  export WEFT_GOOGLE_AUTH_URL=${gmail.authorizeUrl}`,
  `  export WEFT_GRAPH_API_URL=${graph.graphUrl}`,
  `  export WEFT_MICROSOFT_TOKEN_URL='${graph.tokenUrl}'`,
  `  export WEFT_MICROSOFT_AUTH_URL='${graph.authorizeUrl}'`,
  '',
  `Mailbox: ${ACCOUNT}. Connections to create (POST /api/v1/connections/by-org/<org>):`,
  `  ${JSON.stringify({ type: 'gmail-oauth', name: 'dev-gmail', data: { clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, refreshToken: gmailRefresh } })}`,
  `  ${JSON.stringify({ type: 'outlook-oauth', name: 'dev-outlook', data: { clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, refreshToken: outlookRefresh } })}`,
  `(or create them with only clientId and clientSecret and go through /api/v1/connections/oauth/<gmail|outlook>/start).`,
  '',
  'Send an email:',
  `  curl -X POST ${delivery.url}/messages -H 'content-type: application/json' \\`,
  `    -d '{"from":"boss@example.test","subject":"Invoice 42","text":"Please pay"}'`,
  '',
  'Ctrl-C stops them.',
];
console.log(lines.join('\n'));

const stop = (): void => {
  void Promise.all([gmail.close(), graph.close(), delivery.close()]).then(() => process.exit(0));
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
