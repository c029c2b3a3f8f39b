import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { blobKeyOf, LocalDiskBlobStorage } from '@weft/blob-storage';
import type { DecryptedConnection } from '@weft/contracts';
import { createLogger } from '@weft/observability';
import { DIALECTS, openTestStore, type TestStore } from '../../../libs/event-store/test/support/test-database.js';
import { blobFiles } from '../src/adapters/blob-files.js';
import { gmailListenerFactory, outlookListenerFactory } from '../src/adapters/mail/index.js';
import { ListenerStatusBoard } from '../src/application/listener-status.js';
import { ListenerSupervisor } from '../src/application/listener-supervisor.js';
import { MailTestClock } from './support/mail-clock.js';
import {
  ACCOUNT,
  CLIENT_ID,
  CLIENT_SECRET,
  startLocalProviders,
  type LocalProviders,
} from './support/mail-providers.js';
import { catalogOf, QueuedRequests, scheduledProcess } from './support/schedule-rig.js';

const T0 = Date.UTC(2026, 10, 23, 9, 0, 0);

/** The mail listeners under the real supervisor: connections from the catalog port, attachments in real blob storage. */
describe.each(DIALECTS)('mail triggers in the trigger service (%s)', (dialect) => {
  let testStore: TestStore;
  let clock: MailTestClock;
  let providers: LocalProviders;
  let dir: string;
  let blobs: LocalDiskBlobStorage;

  beforeEach(async () => {
    testStore = await openTestStore(dialect);
    clock = new MailTestClock(T0);
    providers = await startLocalProviders(clock);
    dir = await mkdtemp(join(tmpdir(), 'weft-mail-'));
    blobs = new LocalDiskBlobStorage(dir);
  });

  afterEach(async () => {
    await providers.close();
    await blobs.close();
    await rm(dir, { recursive: true, force: true });
    await testStore.dispose();
  });

  it('gmail and outlook input nodes of a running process start executions with stored attachments; a stop ends them', async () => {
    const process = scheduledProcess({ cronExpression: '0 0 1 1 *' });
    process.nodes = [
      {
        id: 'gmail-in',
        type: 'inputNode',
        position: { x: 0, y: 0 },
        config: { label: 'Gmail', triggerType: 'gmail', connectionId: 'g', pollingInterval: 5 },
      },
      {
        id: 'outlook-in',
        type: 'inputNode',
        position: { x: 0, y: 0 },
        config: { label: 'Outlook', triggerType: 'outlook', connectionId: 'o', pollingInterval: 5 },
      },
    ];
    const connections = new Map<string, DecryptedConnection>(
      (['g', 'o'] as const).map((id) => [
        id,
        {
          id,
          organizationId: process.organization_id,
          type: id === 'g' ? 'gmail-oauth' : 'outlook-oauth',
          name: id,
          data: {
            clientId: CLIENT_ID,
            clientSecret: CLIENT_SECRET,
            refreshToken: providers.identity.issueRefreshToken(CLIENT_ID, ACCOUNT),
          },
        },
      ]),
    );
    const replaced: string[] = [];
    const catalog = {
      ...catalogOf(process),
      connection: async (id: string, organizationId: string) => {
        const connection = connections.get(id);
        if (!connection || organizationId !== process.organization_id) throw new Error('connection not found');
        return connection;
      },
      replaceConnectionData: async (id: string, _organizationId: string, data: Record<string, unknown>) => {
        replaced.push(id);
        connections.set(id, { ...connections.get(id)!, data });
      },
    };
    const queue = new QueuedRequests();
    const options = providers.options();
    const supervisor = new ListenerSupervisor({
      factories: { gmail: gmailListenerFactory(options), outlook: outlookListenerFactory(options) },
      catalog,
      executions: queue,
      files: blobFiles(blobs),
      store: testStore.store,
      clock,
      logger: createLogger('trigger-test', { level: 'silent' }),
      status: new ListenerStatusBoard(),
    });
    await supervisor.restoreAll();
    await clock.parked(2);
    expect(replaced.sort()).toEqual(['g', 'o']);

    providers.mailboxes.deliver(ACCOUNT, {
      from: 'Buyer <buyer@acme.test>',
      subject: 'Invoice 7',
      text: 'see attached',
      receivedAt: T0 + 1_000,
      attachments: [{ filename: 'invoice.pdf', mimeType: 'application/pdf', content: Buffer.from('%PDF-1.7') }],
    });
    clock.advance(5_000);
    await clock.parked(2);

    expect(queue.requests.map((request) => request.inputNodeId).sort()).toEqual(['gmail-in', 'outlook-in']);
    for (const request of queue.requests) {
      const input = request.inputData as { subject: string; attachments: { url: string; size: number }[] };
      expect(input.subject).toBe('Invoice 7');
      const [attachment] = input.attachments;
      expect(
        attachment!.url.startsWith(
          `/api/v1/files/${process.organization_id}/triggers/${process.id}/${request.inputNodeId}/`,
        ),
      ).toBe(true);
      expect((await blobs.getBuffer(blobKeyOf(attachment!.url))).toString()).toBe('%PDF-1.7');
    }
    expect(supervisor.statusBoard.of(process.id, 'gmail-in')).toMatchObject({ state: 'listening', last_error: null });

    catalog.setRunning(false);
    await supervisor.reconcile(process.id);
    // Both poll loops have ended: nothing waits on the clock to poll again.
    expect(clock.parkedCount).toBe(0);
    expect(queue.requests).toHaveLength(2);
    await supervisor.stopAll();
  });
});
