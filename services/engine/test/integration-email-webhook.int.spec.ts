import { createHmac } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { DecryptedConnection } from '@weft/contracts';
import { SMTPServer } from 'smtp-server';
import { integrationNodeExecutor } from '../src/adapters/nodes/integration-node.js';
import { OutboundGuard } from '../src/adapters/http/outbound-guard.js';
import { GraphBuilder } from './fixtures/graph-builder.js';
import { json, startLocalHttpServer, type LocalHttpServer } from './support/local-http-server.js';
import { pureExecutors, runInMemory } from './support/run-in-memory.js';

interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
  user?: string;
}

describe('integration node: email over SMTP and signed webhooks', () => {
  let smtp: SMTPServer;
  let smtpPort: number;
  const mails: ReceivedMail[] = [];
  let stallSmtp = false;
  let webhooks: LocalHttpServer;

  beforeAll(async () => {
    smtp = new SMTPServer({
      authOptional: true,
      closeTimeout: 50,
      disabledCommands: ['STARTTLS'],
      onAuth(auth, _session, callback) {
        if (auth.username === 'mailer' && auth.password === 'pw') return callback(null, { user: auth.username });
        callback(new Error('bad credentials'));
      },
      onData(stream, session, callback) {
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => {
          if (stallSmtp) return; // never answers: the node's timeout must end it
          mails.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((rcpt) => rcpt.address),
            raw: Buffer.concat(chunks).toString(),
            user: session.user as string | undefined,
          });
          callback();
        });
      },
    });
    await new Promise<void>((resolve) => smtp.listen(0, '127.0.0.1', resolve));
    smtpPort = (smtp.server.address() as AddressInfo).port;
    webhooks = await startLocalHttpServer((_request, res) => json(res, 200, { ok: true }));
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => smtp.close(resolve));
    await webhooks.close();
  });

  const smtpConnection = (data: Record<string, unknown> = {}): DecryptedConnection => ({
    id: 'smtp-1',
    organizationId: 'org',
    type: 'smtp',
    name: 'mail',
    data: {
      host: '127.0.0.1',
      port: smtpPort,
      secure: false,
      username: 'mailer',
      password: 'pw',
      from: 'bot@weft.test',
      ...data,
    },
  });

  const run = async (
    config: Record<string, unknown>,
    options: { data?: unknown; connection?: DecryptedConnection; blockPrivate?: boolean; signal?: AbortSignal } = {},
  ) => {
    const g = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('Send', 'integrationNode', config)
      .edge('In', 'Send');
    const guard = new OutboundGuard({ blockPrivate: options.blockPrivate === true });
    return runInMemory(g.snapshot(), g.id('In'), options.data ?? {}, {
      executors: pureExecutors(integrationNodeExecutor({ guard, backoffMs: 5 })),
      connections: { 'smtp-1': options.connection ?? smtpConnection() },
      signal: options.signal,
    });
  };

  test('sends an email with templated fields and a file-reference attachment; returns messageId and accepted', async () => {
    const attachment = {
      name: 'note.txt',
      size: 11,
      contentType: 'text/plain',
      url: `data:text/plain;base64,${Buffer.from('hello files').toString('base64')}`,
    };
    const { outcome, listener } = await run(
      {
        kind: 'email',
        connectionId: 'smtp-1',
        to: '{{input["In"]["to"]}}',
        cc: ['cc@weft.test'],
        subject: 'Order {{input["In"]["id"]}}',
        text: 'Your order is ready',
        attachments: [attachment],
      },
      { data: { to: 'alice@weft.test', id: 7 } },
    );
    expect(outcome.status).toBe('completed');
    const output = listener.output('Send') as { messageId: string; accepted: string[] };
    expect(output.accepted).toEqual(['alice@weft.test', 'cc@weft.test']);
    expect(output.messageId).toMatch(/^<.+>$/);
    const mail = mails.at(-1)!;
    expect(mail).toMatchObject({ from: 'bot@weft.test', to: ['alice@weft.test', 'cc@weft.test'], user: 'mailer' });
    expect(mail.raw).toContain('Subject: Order 7');
    expect(mail.raw).toContain('filename=note.txt');
    expect(mail.raw).toContain(Buffer.from('hello files').toString('base64'));
  });

  test('an SMTP host the outbound guard refuses fails the node before connecting', async () => {
    const before = mails.length;
    const { outcome } = await run(
      { kind: 'email', connectionId: 'smtp-1', to: 'a@weft.test', subject: 's', text: 't' },
      { blockPrivate: true },
    );
    expect(outcome).toMatchObject({ status: 'failed', error: expect.stringContaining('not a public address') });
    expect(mails.length).toBe(before);
  });

  test('a metadata address is refused even without WEFT_OUTBOUND_BLOCK_PRIVATE', async () => {
    const { outcome } = await run(
      { kind: 'email', connectionId: 'smtp-1', to: 'a@weft.test', subject: 's' },
      { connection: smtpConnection({ host: '169.254.169.254', port: 25 }) },
    );
    expect(outcome).toMatchObject({ status: 'failed', error: expect.stringContaining('cloud metadata') });
  });

  test('wrong credentials fail the node with the SMTP cause and never echo the password', async () => {
    const { outcome } = await run(
      { kind: 'email', connectionId: 'smtp-1', to: 'a@weft.test', subject: 's' },
      { connection: smtpConnection({ password: 'wrong-secret' }) },
    );
    expect(outcome).toMatchObject({
      status: 'failed',
      error: expect.stringMatching(/^SMTP 127\.0\.0\.1:\d+ failed: Invalid login/),
    });
    expect((outcome as { error: string }).error).not.toContain('wrong-secret');
  });

  test('a connection that is not smtp is refused with a clear error', async () => {
    const { outcome } = await run(
      { kind: 'email', connectionId: 'smtp-1', to: 'a@weft.test', subject: 's' },
      { connection: { ...smtpConnection(), type: 'http' } },
    );
    expect(outcome).toMatchObject({ status: 'failed', error: 'connection smtp-1 is not an smtp connection' });
  });

  test('a server that never answers times out after timeoutMs', async () => {
    stallSmtp = true;
    try {
      const { outcome } = await run({
        kind: 'email',
        connectionId: 'smtp-1',
        to: 'a@weft.test',
        subject: 's',
        timeoutMs: 300,
      });
      expect(outcome).toMatchObject({ status: 'failed', error: expect.stringContaining('SMTP 127.0.0.1') });
    } finally {
      stallSmtp = false;
    }
  });

  test('cancelling the execution ends a send in progress', async () => {
    stallSmtp = true;
    try {
      const controller = new AbortController();
      const running = run(
        { kind: 'email', connectionId: 'smtp-1', to: 'a@weft.test', subject: 's', timeoutMs: 60_000 },
        { signal: controller.signal },
      );
      setTimeout(() => controller.abort(new Error('cancelled by test')), 200);
      const { outcome } = await running;
      expect(outcome.status).not.toBe('completed');
    } finally {
      stallSmtp = false;
    }
  });

  test('webhook: POSTs the JSON body with X-Weft-Signature = sha256 HMAC of the exact bytes', async () => {
    const { outcome, listener } = await run(
      {
        kind: 'webhook',
        url: `${webhooks.url}/hook`,
        secret: 'shh',
        body: { order: '{{input["In"]["id"]}}', note: 'é' },
      },
      { data: { id: 42 } },
    );
    expect(outcome.status).toBe('completed');
    expect(listener.output('Send')).toMatchObject({ status: 200, body: { ok: true } });
    const received = webhooks.requests.at(-1)!;
    expect(received.method).toBe('POST');
    expect(JSON.parse(received.body)).toEqual({ order: 42, note: 'é' });
    const expected = `sha256=${createHmac('sha256', 'shh').update(received.body).digest('hex')}`;
    expect(received.headers['x-weft-signature']).toBe(expected);
    expect(received.headers['content-type']).toBe('application/json');
  });

  test('webhook: a target the outbound guard refuses fails the node', async () => {
    const { outcome } = await run(
      { kind: 'webhook', url: `${webhooks.url}/hook`, secret: 'shh', body: {} },
      { blockPrivate: true },
    );
    expect(outcome).toMatchObject({ status: 'failed', error: expect.stringContaining('not a public address') });
  });
});
