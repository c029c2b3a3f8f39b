import { createHmac, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Server as TcpServer } from 'node:net';
import { client } from './weft-harness.js';
import {
  DEPLOYMENT_START_TIMEOUT_MS,
  SLOW_RUN_TEST_TIMEOUT_MS,
  SLOW_RUN_WAIT_SECONDS,
  deploymentKind,
  type Deployment,
} from './support/deployment.js';
import { useSharedDeployment } from './support/shared-deployment.js';

/**
 * webAutomationNode -> ocrNode -> integrationNode (email, webhook) as a user runs them over HTTP,
 * in both modes: a page served on loopback is screenshotted (a file in blob storage), OCR reads
 * the screenshot, the screenshot is mailed through an smtp connection to a loopback SMTP server,
 * and the OCR text is posted to a loopback webhook receiver that verifies the signature.
 */

/** The least SMTP a mail client needs, enough to capture one message per connection. */
function startSmtp(messages: string[]): Promise<TcpServer> {
  const server = createTcpServer((socket) => {
    let data: string | undefined;
    let buffered = '';
    socket.write('220 e2e ESMTP\r\n');
    socket.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('latin1');
      for (;;) {
        if (data !== undefined) {
          const end = buffered.indexOf('\r\n.\r\n');
          if (end < 0) return;
          messages.push(data + buffered.slice(0, end));
          buffered = buffered.slice(end + 5);
          data = undefined;
          socket.write('250 queued\r\n');
          continue;
        }
        const line = buffered.indexOf('\r\n');
        if (line < 0) return;
        const command = buffered.slice(0, line).toUpperCase();
        buffered = buffered.slice(line + 2);
        if (command.startsWith('EHLO') || command.startsWith('HELO')) socket.write('250 e2e\r\n');
        else if (command.startsWith('DATA')) {
          data = '';
          socket.write('354 go\r\n');
        } else if (command.startsWith('QUIT')) socket.end('221 bye\r\n');
        else socket.write('250 ok\r\n');
      }
    });
    socket.on('error', () => undefined);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

describe(`file, OCR, browser, email and webhook nodes over HTTP (${deploymentKind()})`, () => {
  let under: Deployment;
  let site: Server;
  let smtp: TcpServer;
  const mails: string[] = [];
  const hooks: { body: string; signature: string | undefined; signed: string }[] = [];
  let org: { id: string; key: string };
  let connectionId: string;
  let hookConnectionId: string;
  const as = (key: string) => client(under.baseUrl, key);
  const portOf = (server: Server | TcpServer) => (server.address() as AddressInfo).port;

  beforeAll(async () => {
    site = createServer((req, res) => {
      if (req.method === 'POST') {
        const chunks: Buffer[] = [];
        req.on('data', (chunk: Buffer) => chunks.push(chunk));
        req.on('end', () => {
          const body = Buffer.concat(chunks).toString();
          const signed = `${String(req.headers['x-weft-timestamp'])}.${String(req.headers['x-weft-delivery'])}.${body}`;
          hooks.push({ body, signature: req.headers['x-weft-signature'] as string, signed });
          res.writeHead(204).end();
        });
        return;
      }
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<body style="background:#fff"><h1 id="title" style="font:72px sans-serif">WEFT ORDER 42</h1></body>');
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    smtp = await startSmtp(mails);
    under = await useSharedDeployment();
    const system = as(under.key);
    const created = await system('POST', '/api/v1/organizations', { name: 'Media Inc' });
    const issued = await system('POST', `/api/v1/api-keys/by-org/${created.body.id}`, {
      name: 'user',
      userName: 'Media user',
      userId: randomUUID(),
    });
    org = { id: created.body.id as string, key: issued.body.key as string };
    const connection = await as(org.key)('POST', `/api/v1/connections/by-org/${org.id}`, {
      type: 'smtp',
      name: 'loopback mail',
      data: {
        host: '127.0.0.1',
        port: portOf(smtp),
        secure: false,
        from: 'bot@weft.test',
        password: 'smtp-e2e-secret',
      },
    });
    expect(connection.status).toBe(201);
    connectionId = connection.body.id as string;
    const hookConnection = await as(org.key)('POST', `/api/v1/connections/by-org/${org.id}`, {
      type: 'http',
      name: 'loopback receiver',
      data: { signingSecret: 'hook-secret' },
    });
    expect(hookConnection.status).toBe(201);
    hookConnectionId = hookConnection.body.id as string;
  }, DEPLOYMENT_START_TIMEOUT_MS);
  afterAll(async () => {
    await under?.stop();
    await new Promise((resolve) => site?.close(resolve));
    await new Promise((resolve) => smtp?.close(resolve));
  });

  const createProcess = async (nodes: { id: string; type: string; config: Record<string, unknown> }[]) => {
    const edges = nodes.slice(1).map((node, index) => ({ source_node_id: nodes[index]!.id, target_node_id: node.id }));
    const created = await as(org.key)('POST', `/api/v1/processes/by-org/${org.id}`, {
      name: randomUUID(),
      nodes,
      edges,
    });
    expect(created.status).toBe(201);
    return created.body.id as string;
  };

  test('the smtp connection is stored without returning its password', async () => {
    const read = await as(org.key)('GET', `/api/v1/connections/by-id/${connectionId}`);
    expect(read.status).toBe(200);
    expect(JSON.stringify(read.body)).not.toContain('smtp-e2e-secret');
  });

  test(
    'browse -> OCR -> email -> webhook runs end to end through POST /processes/test',
    async () => {
      const pageUrl = `http://127.0.0.1:${portOf(site)}/order`;
      const id = await createProcess([
        { id: 'in', type: 'inputNode', config: { label: 'In', triggerType: 'manual' } },
        {
          id: 'browse',
          type: 'webAutomationNode',
          config: {
            label: 'Browse',
            allowedHosts: ['127.0.0.1'],
            steps: [
              { action: 'goto', url: pageUrl },
              { action: 'extractText', selector: '#title', name: 'title' },
              { action: 'screenshot', name: 'order.png' },
            ],
          },
        },
        { id: 'scan', type: 'ocrNode', config: { label: 'Scan', file: '{{input["Browse"]["files"][0]}}' } },
        {
          id: 'mail',
          type: 'integrationNode',
          config: {
            label: 'Mail',
            kind: 'email',
            connectionId,
            to: '{{input["In"]["email"]}}',
            subject: 'Order {{input["Browse"]["extracted"]["title"]}}',
            text: 'See the attachment.',
            attachments: ['{{input["Browse"]["files"][0]}}'],
          },
        },
        {
          id: 'hook',
          type: 'integrationNode',
          config: {
            label: 'Hook',
            kind: 'webhook',
            url: `http://127.0.0.1:${portOf(site)}/hook`,
            connectionId: hookConnectionId,
            body: { text: '{{input["Scan"]["text"]}}', mail: '{{input["Mail"]["messageId"]}}' },
          },
        },
        {
          id: 'out',
          type: 'outputNode',
          config: { label: 'Out', returnToClient: true, fields: { accepted: '{{input["Mail"]["accepted"]}}' } },
        },
      ]);
      const lint = await as(org.key)('POST', `/api/v1/processes/${id}/lint`);
      expect(lint.body).toMatchObject({ valid: true });
      const mailsBefore = mails.length;
      const run = await as(org.key)('POST', `/api/v1/processes/test/${id}?waitSeconds=${SLOW_RUN_WAIT_SECONDS}`, {
        email: 'ada@weft.test',
      });
      expect(run.status).toBe(200);
      expect(run.body).toMatchObject({ status: 'completed', output_data: { Out: { accepted: ['ada@weft.test'] } } });
      const states = run.body.node_states as { node_name: string; output_data: Record<string, unknown> }[];
      const browse = states.find((state) => state.node_name === 'Browse')!.output_data as {
        extracted: unknown;
        files: { name: string; url: string; contentType: string }[];
      };
      expect(browse.extracted).toEqual({ title: 'WEFT ORDER 42' });
      expect(browse.files[0]).toMatchObject({ name: 'order.png', contentType: 'image/png' });
      expect(browse.files[0]!.url).toMatch(/^weft-blob:\/\//);
      const scan = states.find((state) => state.node_name === 'Scan')!.output_data as {
        text: string;
        pages: unknown[];
      };
      expect(scan.text).toContain('WEFT ORDER 42');
      expect(scan.pages).toHaveLength(1);
      expect(mails.length).toBe(mailsBefore + 1);
      expect(mails.at(-1)).toContain('Subject: Order WEFT ORDER 42');
      expect(mails.at(-1)).toContain('filename=order.png');
      const hook = hooks.at(-1)!;
      expect(JSON.parse(hook.body).text).toContain('WEFT ORDER 42');
      expect(hook.signature).toBe(`sha256=${createHmac('sha256', 'hook-secret').update(hook.signed).digest('hex')}`);
      const process = await as(org.key)('GET', `/api/v1/processes/by-id/${id}`);
      expect(process.status).toBe(200);
      expect(JSON.stringify(process.body)).not.toContain('hook-secret');
    },
    SLOW_RUN_TEST_TIMEOUT_MS,
  );

  test(
    'bad configs are lint findings; a runtime failure names the step and its cause',
    async () => {
      const bad = await createProcess([
        { id: 'in', type: 'inputNode', config: { label: 'In', triggerType: 'manual' } },
        { id: 'browse', type: 'webAutomationNode', config: { label: 'Browse', steps: [{ action: 'goto' }] } },
        { id: 'mail', type: 'integrationNode', config: { label: 'Mail', kind: 'email', connectionId } },
        { id: 'out', type: 'outputNode', config: { label: 'Out' } },
      ]);
      const lint = await as(org.key)('POST', `/api/v1/processes/${bad}/lint`);
      expect(lint.body.valid).toBe(false);
      const findings = JSON.stringify(lint.body.findings);
      expect(findings).toContain("/config/steps/0 must have required property 'url'");
      expect(findings).toContain('subject');

      const blocked = await createProcess([
        { id: 'in', type: 'inputNode', config: { label: 'In', triggerType: 'manual' } },
        {
          id: 'browse',
          type: 'webAutomationNode',
          config: {
            label: 'Browse',
            allowedHosts: ['example.test'],
            steps: [{ action: 'goto', url: `http://127.0.0.1:${portOf(site)}/order` }],
          },
        },
        { id: 'out', type: 'outputNode', config: { label: 'Out' } },
      ]);
      const run = await as(org.key)(
        'POST',
        `/api/v1/processes/test/${blocked}?waitSeconds=${SLOW_RUN_WAIT_SECONDS}`,
        {},
      );
      expect(run.body.status).toBe('failed');
      expect(JSON.stringify(run.body)).toContain('host 127.0.0.1 is not in allowedHosts');
    },
    SLOW_RUN_TEST_TIMEOUT_MS,
  );
});
