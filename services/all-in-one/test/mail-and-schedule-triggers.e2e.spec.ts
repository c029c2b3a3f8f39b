import { randomUUID } from 'node:crypto';
import {
  FakeIdentity,
  FakeMailboxes,
  startGmailServer,
  startGraphServer,
  type GmailServer,
  type GraphServer,
} from '@weft/mail-provider-servers';
import { client } from './weft-harness.js';
import { DEPLOYMENT_START_TIMEOUT_MS, deploymentKind, startDeployment, type Deployment } from './support/deployment.js';

/**
 * The polling and timer triggers end to end, as a user sets them up over HTTP: OAuth connections
 * to Gmail and Outlook (the local provider servers speak their wire formats), a process whose
 * input nodes are a Gmail inbox, an Outlook inbox and a minutely schedule, started; an email to
 * each mailbox and the next minute each start one execution with the trigger's documented output.
 */
const ACCOUNT = 'ops@example.test';
const CLIENT_ID = 'weft-e2e-client';
const CLIENT_SECRET = 'weft-e2e-secret';

describe(`mail and schedule triggers (${deploymentKind()})`, () => {
  let mailboxes: FakeMailboxes;
  let identity: FakeIdentity;
  let gmail: GmailServer;
  let graph: GraphServer;
  let under: Deployment;
  let org: { id: string; key: string };

  beforeAll(async () => {
    mailboxes = new FakeMailboxes();
    identity = new FakeIdentity();
    identity.registerClient(CLIENT_ID, CLIENT_SECRET);
    gmail = await startGmailServer({ mailboxes, identity });
    graph = await startGraphServer({ mailboxes, identity });
    under = await startDeployment({
      env: {
        WEFT_GMAIL_API_URL: gmail.apiUrl,
        WEFT_GOOGLE_TOKEN_URL: gmail.tokenUrl,
        WEFT_GRAPH_API_URL: graph.graphUrl,
        WEFT_MICROSOFT_TOKEN_URL: graph.tokenUrl,
        // Empty polls back off (1, 2, 4 ... s); the mail must be seen well within the test's wait.
        WEFT_MAIL_MAX_POLL_INTERVAL_SECONDS: '4',
      },
    });
    const system = under.call;
    const created = await system('POST', '/api/v1/organizations', { name: 'Mailroom' });
    const key = await system('POST', `/api/v1/api-keys/by-org/${created.body.id}`, {
      name: 'k',
      userName: 'Ann',
      userId: randomUUID(),
    });
    org = { id: created.body.id, key: key.body.key };
  }, DEPLOYMENT_START_TIMEOUT_MS);

  afterAll(async () => {
    await under?.stop();
    await gmail?.close();
    await graph?.close();
  });

  const connection = async (type: 'gmail-oauth' | 'outlook-oauth'): Promise<string> => {
    const created = await client(under.baseUrl, org.key)('POST', `/api/v1/connections/by-org/${org.id}`, {
      type,
      name: `${type}-${randomUUID()}`,
      data: {
        clientId: CLIENT_ID,
        clientSecret: CLIENT_SECRET,
        refreshToken: identity.issueRefreshToken(CLIENT_ID, ACCOUNT),
        ...(type === 'outlook-oauth' ? { tenantId: 'contoso' } : {}),
      },
    });
    expect(created.status).toBe(201);
    return created.body.id as string;
  };

  test('an email in each inbox and the next minute each start one execution with the trigger output', async () => {
    const call = client(under.baseUrl, org.key);
    const [gmailConnection, outlookConnection] = [await connection('gmail-oauth'), await connection('outlook-oauth')];
    const inputs = [
      { label: 'Gmail', triggerType: 'gmail', authMethod: 'oauth', connectionId: gmailConnection, pollingInterval: 1 },
      {
        label: 'Outlook',
        triggerType: 'outlook',
        authMethod: 'oauth',
        connectionId: outlookConnection,
        pollingInterval: 1,
        subjectFilter: 'invoice',
      },
      { label: 'Minutely', triggerType: 'schedule', cronExpression: '* * * * *', body: { source: 'cron' } },
    ];
    const created = await call('POST', `/api/v1/processes/by-org/${org.id}`, {
      name: 'Inbox',
      nodes: [
        ...inputs.map((config, index) => ({ id: `in${index}`, type: 'inputNode', config })),
        { id: 'out', type: 'outputNode', config: { label: 'Out' } },
      ],
      edges: inputs.map((_, index) => ({ source_node_id: `in${index}`, target_node_id: 'out' })),
    });
    expect(created.status).toBe(201);
    const processId = created.body.id as string;
    const started = await call('POST', `/api/v1/processes/start/${processId}`);
    expect(started.status).toBe(200);
    const nodeIds = Object.fromEntries(
      (created.body.nodes as { id: string; config: { label: string } }[]).map((node) => [node.config.label, node.id]),
    );

    // Mail that arrived before a listener started watching is not replayed: deliver once both
    // mail listeners say they listen (their start can take seconds on a loaded machine).
    const listening = async (): Promise<boolean> => {
      const listeners = await call('GET', `/api/v1/processes/${processId}/listeners`);
      const states = (listeners.body.listeners ?? []) as { label: string; state: string }[];
      const watching = (label: string) =>
        ['listening', 'backing_off'].includes(states.find((l) => l.label === label)?.state ?? '');
      return watching('Gmail') && watching('Outlook');
    };
    for (const until = Date.now() + 60_000; !(await listening()) && Date.now() < until;)
      await new Promise((resolve) => setTimeout(resolve, 250));
    expect(await listening()).toBe(true);
    mailboxes.deliver(ACCOUNT, { from: 'boss@example.test', subject: 'Invoice 42', text: 'Please pay' });
    mailboxes.deliver(ACCOUNT, { from: 'news@example.test', subject: 'Newsletter', text: 'Weekly' });

    // One execution per email for Gmail (no filter), only the invoice for Outlook, and one tick.
    type Record_ = { trigger_node_id: string; output_data: { Out: Record<string, any> } };
    const records = new Map<string, Record_>();
    const by = (label: string) => [...records.values()].filter((record) => record.trigger_node_id === nodeIds[label]);
    const deadline = Date.now() + 100_000;
    while (Date.now() < deadline && (by('Gmail').length < 2 || by('Outlook').length < 1 || by('Minutely').length < 1)) {
      const history = await call('GET', `/api/v1/processes/executions/${processId}?pageSize=50`);
      for (const item of history.body.items as { id: string; status: string }[]) {
        if (item.status !== 'completed' || records.has(item.id)) continue;
        records.set(item.id, (await call('GET', `/api/v1/processes/execution/${item.id}`)).body as Record_);
      }
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    expect(
      by('Gmail')
        .map((r) => r.output_data.Out.Gmail.subject)
        .sort(),
    ).toEqual(['Invoice 42', 'Newsletter']);
    expect(
      by('Gmail').find((r) => r.output_data.Out.Gmail.subject === 'Invoice 42')!.output_data.Out.Gmail,
    ).toMatchObject({
      sender: 'boss@example.test',
      body: 'Please pay',
      receiving_account: ACCOUNT,
      date: expect.any(Number),
    });
    expect(by('Outlook').map((r) => r.output_data.Out.Outlook.subject)).toEqual(['Invoice 42']);
    const ticks = by('Minutely');
    expect(ticks.length).toBeGreaterThanOrEqual(1);
    expect(ticks[0]!.output_data.Out.Minutely).toMatchObject({
      cron_expression: '* * * * *',
      source: 'cron',
      triggered_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:00(\.000)?(Z|[+-]\d\d:\d\d)$/),
    });

    // Stopped: nothing new starts, however much mail arrives.
    expect((await call('POST', `/api/v1/processes/stop/${processId}`)).status).toBe(200);
    const before = (await call('GET', `/api/v1/processes/executions/${processId}?pageSize=50`)).body.total as number;
    mailboxes.deliver(ACCOUNT, { from: 'boss@example.test', subject: 'Invoice 43', text: 'Again' });
    await new Promise((resolve) => setTimeout(resolve, 3000));
    const after = (await call('GET', `/api/v1/processes/executions/${processId}?pageSize=50`)).body.total as number;
    expect(after).toBe(before);
  }, 150_000);
});
