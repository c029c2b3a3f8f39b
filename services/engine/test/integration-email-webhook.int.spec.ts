import { spawn } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createBlobStorage } from '@weft/blob-storage';
import { connect, type AddressInfo, type Socket } from 'node:net';
import type { DecryptedConnection } from '@weft/contracts';
import { SMTPServer } from 'smtp-server';
import { integrationNodeExecutor } from '../src/adapters/nodes/integration-node.js';
import { nodeFileSource, type NodeFileSource } from '../src/adapters/nodes/node-files.js';
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
  /** Delays the answer to MAIL FROM: a send is in progress, its message not yet handed over. */
  let slowMailFromMs = 0;
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
      onMailFrom(_address, _session, callback) {
        setTimeout(() => callback(), slowMailFromMs);
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
    // A send the node cancels mid-transaction resets the connection; smtp-server re-emits that as
    // the server's 'error', which unheard would end the whole suite (the cancel tests expect it).
    smtp.on('error', () => undefined);
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
    options: {
      data?: unknown;
      connection?: DecryptedConnection;
      blockPrivate?: boolean;
      signal?: AbortSignal;
      files?: NodeFileSource;
    } = {},
  ) => {
    const g = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('Send', 'integrationNode', config)
      .edge('In', 'Send');
    const guard = new OutboundGuard({ blockPrivate: options.blockPrivate === true });
    return runInMemory(g.snapshot(), g.id('In'), options.data ?? {}, {
      executors: pureExecutors(integrationNodeExecutor({ guard, backoffMs: 5, files: options.files })),
      connections: { 'smtp-1': options.connection ?? smtpConnection() },
      signal: options.signal,
      organizationId: 'org',
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

  test('a server whose connection never opens times out, and a cancel ends the wait', async () => {
    // A listener that never accepts, its one-place queue taken: later connections stay half-open.
    const listener = spawn('python3', [
      '-c',
      "import socket,time\ns=socket.socket(); s.bind(('127.0.0.1',0)); s.listen(0); print(s.getsockname()[1], flush=True); time.sleep(120)",
    ]);
    const filler: Socket[] = [];
    try {
      const port = await new Promise<number>((resolve) =>
        listener.stdout.once('data', (d) => resolve(Number(String(d)))),
      );
      // A reset of this placeholder connection (a loaded machine, the listener ending) is no failure of the test.
      filler.push(connect({ host: '127.0.0.1', port }).on('error', () => undefined));
      await new Promise((resolve) => filler[0]!.once('connect', resolve));
      const connection = smtpConnection({ port });
      const timedOut = await run(
        { kind: 'email', connectionId: 'smtp-1', to: 'a@weft.test', subject: 's', timeoutMs: 300 },
        { connection },
      );
      expect(timedOut.outcome).toMatchObject({
        status: 'failed',
        error: `SMTP 127.0.0.1:${port} timed out after 300 ms`,
      });
      const controller = new AbortController();
      const cancelled = run(
        { kind: 'email', connectionId: 'smtp-1', to: 'a@weft.test', subject: 's', timeoutMs: 60_000 },
        { connection, signal: controller.signal },
      );
      setTimeout(() => controller.abort(new Error('cancelled by test')), 200);
      expect((await cancelled).outcome.status).toBe('aborted');
    } finally {
      for (const socket of filler) socket.destroy();
      listener.kill();
    }
  }, 20_000);

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

  test('a cancel or the timeout before the message is handed over means no mail is sent, however slow the server', async () => {
    slowMailFromMs = 1_500;
    try {
      const before = mails.length;
      const controller = new AbortController();
      const cancelled = run(
        { kind: 'email', connectionId: 'smtp-1', to: 'late@weft.test', subject: 'cancelled', timeoutMs: 60_000 },
        { signal: controller.signal },
      );
      setTimeout(() => controller.abort(new Error('cancelled by test')), 300);
      expect((await cancelled).outcome.status).not.toBe('completed');
      const timedOut = await run({
        kind: 'email',
        connectionId: 'smtp-1',
        to: 'late@weft.test',
        subject: 'timed out',
        timeoutMs: 500,
      });
      expect(timedOut.outcome).toMatchObject({
        status: 'failed',
        error: 'SMTP 127.0.0.1:' + smtpPort + ' timed out after 500 ms',
      });
      // Long after the server would have taken both messages had the sends gone on.
      await new Promise((resolve) => setTimeout(resolve, 3_000));
      expect(mails.length).toBe(before);
    } finally {
      slowMailFromMs = 0;
    }
  }, 30_000);

  test('attachments larger than 25 MiB in all are refused before anything is sent', async () => {
    const dataDir = await mkdtemp(join(tmpdir(), 'weft-mail-blobs-'));
    const blobs = createBlobStorage({ dataDir, s3: undefined });
    try {
      const before = mails.length;
      // One 13 MiB file of the organization, attached twice.
      const file = await blobs.put(
        'org/uploads/big.bin',
        Buffer.alloc(13 * 1024 * 1024, 0x61),
        'application/octet-stream',
      );
      const { outcome } = await run(
        { kind: 'email', connectionId: 'smtp-1', to: 'a@weft.test', subject: 'big', attachments: [file, file] },
        { files: nodeFileSource(blobs, 64 * 1024 * 1024) },
      );
      expect(outcome).toMatchObject({
        status: 'failed',
        error: `the attachments are larger than ${25 * 1024 * 1024} bytes in all`,
      });
      expect(mails.length).toBe(before);
    } finally {
      await blobs.close();
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 30_000);

  /** What a receiver checks: the HMAC of "<timestamp>.<delivery>.<body>" with the shared secret. */
  const verified = (received: { body: string; headers: Record<string, unknown> }, secret: string): boolean => {
    const signed = `${String(received.headers['x-weft-timestamp'])}.${String(received.headers['x-weft-delivery'])}.${received.body}`;
    return (
      received.headers['x-weft-signature'] === `sha256=${createHmac('sha256', secret).update(signed).digest('hex')}`
    );
  };

  test('webhook: POSTs the JSON body signed over timestamp, delivery id and the exact bytes', async () => {
    const started = Math.floor(Date.now() / 1000);
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
    expect(verified(received, 'shh')).toBe(true);
    expect(verified(received, 'other')).toBe(false);
    expect(received.headers['x-weft-delivery']).toMatch(/^[0-9a-f-]{36}\.[^.]+\.[0-9a-f]{16}$/);
    expect(Number(received.headers['x-weft-timestamp'])).toBeGreaterThanOrEqual(started - 1);
    expect(received.headers['content-type']).toBe('application/json');
  });

  test("webhook: the secret comes from an http connection's signingSecret; a retry carries the same delivery id, signed when it is sent", async () => {
    let calls = 0;
    // Retry-After: 2 puts the second attempt at least one whole second after the first.
    const flaky = await startLocalHttpServer((_request, res) => {
      if (calls++ > 0) return json(res, 200, { ok: true });
      res.setHeader('retry-after', '2');
      json(res, 503, { busy: true });
    });
    try {
      const g = new GraphBuilder()
        .node('In', 'inputNode', { triggerType: 'manual' })
        .node('Send', 'integrationNode', {
          kind: 'webhook',
          url: `${flaky.url}/hook`,
          connectionId: 'hook-1',
          body: { a: 1 },
        })
        .edge('In', 'Send');
      const hookConnection: DecryptedConnection = {
        id: 'hook-1',
        organizationId: 'org',
        type: 'http',
        name: 'receiver',
        data: { signingSecret: 'from-the-connection' },
      };
      const { outcome } = await runInMemory(
        g.snapshot(),
        g.id('In'),
        {},
        {
          executors: pureExecutors(
            integrationNodeExecutor({ guard: new OutboundGuard({ blockPrivate: false }), backoffMs: 5 }),
          ),
          connections: { 'hook-1': hookConnection },
        },
      );
      expect(outcome.status).toBe('completed');
      const [first, second] = flaky.requests;
      expect(verified(first!, 'from-the-connection')).toBe(true);
      expect(verified(second!, 'from-the-connection')).toBe(true);
      expect(second!.headers['x-weft-delivery']).toBe(first!.headers['x-weft-delivery']);
      expect(Number(second!.headers['x-weft-timestamp'])).toBeGreaterThan(Number(first!.headers['x-weft-timestamp']));
      // The secret is never sent as a header.
      expect(JSON.stringify(first!.headers)).not.toContain('from-the-connection');
    } finally {
      await flaky.close();
    }
  });

  test('webhook: each loop iteration is a delivery of its own, also with the same body', async () => {
    const before = webhooks.requests.length;
    const g = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('Each', 'loopNode', { items: '{{input["In"]["items"]}}' })
      .node('Send', 'integrationNode', {
        kind: 'webhook',
        url: `${webhooks.url}/hook`,
        secret: 'shh',
        body: { same: 1 },
      })
      .edge('In', 'Each')
      .edge('Each', 'Send', 'start');
    const executor = integrationNodeExecutor({ guard: new OutboundGuard({ blockPrivate: false }), backoffMs: 5 });
    const { outcome } = await runInMemory(
      g.snapshot(),
      g.id('In'),
      { items: [1, 2] },
      {
        executors: pureExecutors(executor),
      },
    );
    expect(outcome.status).toBe('completed');
    const deliveries = webhooks.requests.slice(before).map((request) => String(request.headers['x-weft-delivery']));
    expect(deliveries).toHaveLength(2);
    expect(new Set(deliveries).size).toBe(2);
    expect(deliveries.map((delivery) => delivery.split('.')[1])).toEqual([
      `${g.id('Each')}#0/${g.id('Send')}`,
      `${g.id('Each')}#1/${g.id('Send')}`,
    ]);
  });

  test.each(['webhook', 'http'])(
    '%s: a connection that is not http is refused before anything is sent (its credentials never go out)',
    async (kind) => {
      const before = webhooks.requests.length;
      const { outcome } = await run(
        { kind, url: `${webhooks.url}/hook`, connectionId: 'smtp-1', secret: 'shh', body: {} },
        { connection: smtpConnection({ username: 'mailer', password: 'smtp-password' }) },
      );
      expect(outcome).toMatchObject({ status: 'failed', error: 'connection smtp-1 is not an http connection' });
      expect(webhooks.requests.length).toBe(before);
    },
  );

  test('webhook: a target the outbound guard refuses fails the node', async () => {
    const { outcome } = await run(
      { kind: 'webhook', url: `${webhooks.url}/hook`, secret: 'shh', body: {} },
      { blockPrivate: true },
    );
    expect(outcome).toMatchObject({ status: 'failed', error: expect.stringContaining('not a public address') });
  });
});
