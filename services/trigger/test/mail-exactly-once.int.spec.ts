import { randomUUID } from 'node:crypto';
import type { FakeEmail } from '@weft/mail-provider-servers';
import { DIALECTS, openTestStore, type TestStore } from '../../../libs/event-store/test/support/test-database.js';
import { gmailListenerFactory, outlookListenerFactory } from '../src/adapters/mail/index.js';
import type { ListenerContext, TriggerListener } from '../src/application/listener-port.js';
import { MailTestClock } from './support/mail-clock.js';
import {
  addOAuthConnection,
  ACCOUNT,
  oauthConfig,
  startLocalProviders,
  type LocalProviders,
  type ProviderName,
} from './support/mail-providers.js';
import { MailTestWorld, replicaContext, type Replica } from './support/mail-test-context.js';

const T0 = Date.UTC(2026, 10, 23, 9, 0, 0);
const ATTACHMENT_MAX = 1000;
const factories = { gmail: gmailListenerFactory, outlook: outlookListenerFactory };

/** Email i of the 200: some fail the sender filter, some the subject filter, some carry attachments. */
function emailSpec(i: number, receivedAt: number) {
  const sender =
    i % 5 === 0
      ? { address: 'spam@nowhere.test' }
      : i % 2 === 0
        ? { name: `Buyer, ${i}`, address: `buyer${i}@ACME.test` }
        : { address: 'vip@other.test' };
  const subject = i % 7 === 0 ? `hello ${i}` : i % 2 === 0 ? `Invoice #${i}` : `Your ORDER ${i}`;
  const attachments =
    i % 10 === 1
      ? [
          { filename: `small-${i}.txt`, mimeType: 'text/plain', content: Buffer.alloc(100, i) },
          { filename: `big-${i}.bin`, mimeType: 'application/octet-stream', content: Buffer.alloc(5000, i) },
        ]
      : [];
  return {
    from: sender,
    subject,
    text: `body ${i}`,
    html: `<p>body ${i}</p>`,
    cc: [`cc${i}@acme.test`],
    receivedAt,
    attachments,
  };
}

const matches = (i: number): boolean => i % 5 !== 0 && i % 7 !== 0;

describe.each(DIALECTS)('mail triggers exactly once (%s)', (dialect) => {
  let testStore: TestStore;
  let clock: MailTestClock;
  let providers: LocalProviders;

  beforeEach(async () => {
    testStore = await openTestStore(dialect);
    clock = new MailTestClock(T0);
    providers = await startLocalProviders(clock);
  });

  afterEach(async () => {
    await providers.close();
    await testStore.dispose();
  });

  describe.each<ProviderName>(['gmail', 'outlook'])('%s', (provider) => {
    it('starts each of 200 emails arriving across polls exactly once, through a crash mid-poll and two replicas', async () => {
      const world = new MailTestWorld();
      addOAuthConnection(world, providers, provider);
      const processId = randomUUID();
      const config = oauthConfig(provider, {
        senderFilter: '*@acme.test, VIP@other.test',
        subjectFilter: 'invoice,order',
        attachmentMaxSize: ATTACHMENT_MAX,
      });
      const options = providers.options();
      const replica = (fire?: ListenerContext['fire']): { replica: Replica; listener: TriggerListener } => {
        const made = replicaContext({
          world,
          store: testStore.store,
          clock,
          processId,
          nodeId: 'mail-in',
          config,
          ...(fire ? { fire } : {}),
        });
        return { replica: made, listener: factories[provider](options)(made.context) };
      };
      const a = replica();
      const b = replica();
      await Promise.all([a.listener.start(), b.listener.start()]);
      await clock.parked(2);

      const delivered: FakeEmail[] = [];
      const deliver = (from: number, to: number): void => {
        for (let i = from; i < to; i++) {
          // Three emails per millisecond: many share a second.
          delivered.push(
            providers.mailboxes.deliver(ACCOUNT, emailSpec(i, clock.now().getTime() - 900 + (Math.floor(i / 3) % 50))),
          );
        }
      };
      const pollBoth = async (times: number): Promise<void> => {
        for (let n = 0; n < times; n++) {
          clock.advanceToNextWake();
          await clock.parked(2);
        }
      };

      const advance = async (ms: number): Promise<void> => {
        clock.advance(ms);
        await clock.parked(2);
      };

      await advance(5_000);
      deliver(0, 50);
      await pollBoth(3);

      // A third replica claims the first page of the next batch and dies: its first start was
      // queued but not recorded, the rest of its page not started at all.
      await advance(2_000);
      deliver(50, 100);
      let crashes = 0;
      const crashing = replica(async (input, fireOptions) => {
        await a.replica.context.fire(input, fireOptions);
        crashes += 1;
        throw new Error('replica crashed after queueing the start');
      });
      await crashing.listener.start();
      await clock.parked(3);
      crashing.replica.abort();
      await crashing.listener.stop();
      expect(crashes).toBe(1);
      const claims = (await testStore.store.readStream(`mailbox-${processId}-mail-in`)).filter(
        (event) => event.type === 'EmailsClaimed',
      );
      const crashClaimed = new Set(
        (claims.at(-1)!.data as { claimed: { id: string }[] }).claimed.map((email) => email.id),
      );
      expect(crashClaimed.size).toBeGreaterThan(0);

      await pollBoth(3);
      await advance(3_000);
      deliver(100, 150);
      await pollBoth(3);
      await advance(3_000);
      deliver(150, 200);
      // Past the claim lease, so the crashed replica's claims are fired again.
      for (let n = 0; n < 12; n++) await pollBoth(1);

      const expected = delivered.filter((_, i) => matches(i));
      const startedKeys = [...world.started.values()].map((firing) => firing.dedupeKey).sort();
      expect(startedKeys).toEqual(expected.map((email) => email.id).sort());
      expect(new Set(world.started.keys()).size).toBe(expected.length);

      // Replicas racing never fire an email twice; only the crashed claims were fired again (same execution id).
      const counts = new Map<string, number>();
      for (const key of world.firedKeys()) counts.set(key, (counts.get(key) ?? 0) + 1);
      for (const [key, count] of counts) {
        if (!crashClaimed.has(key)) expect([key, count]).toEqual([key, 1]);
      }

      // Output fields, attachments stored, oversize ones skipped.
      for (const [index, email] of delivered.entries()) {
        if (!matches(index)) continue;
        const firing = [...world.started.values()].find((candidate) => candidate.dedupeKey === email.id)!;
        expect(firing.input).toMatchObject({
          id: email.id,
          thread_id: email.threadId,
          sender: email.from.address.toLowerCase(),
          recipients: [ACCOUNT],
          cc: email.cc,
          subject: email.subject,
          body: `body ${index}`,
          body_html: `<p>body ${index}</p>`,
          // Graph gives receivedDateTime to the second.
          date: provider === 'outlook' ? Math.floor(email.receivedAt / 1000) * 1000 : email.receivedAt,
          receiving_account: ACCOUNT,
        });
        const attachments = firing.input.attachments as { name: string; url: string; size: number }[];
        if (index % 10 === 1) {
          expect(attachments).toEqual([
            {
              name: `small-${index}.txt`,
              url: expect.stringMatching(new RegExp(`^/api/v1/files/org-1/triggers/${processId}/mail-in/file-\\d+$`)),
              size: 100,
              contentType: 'text/plain',
            },
          ]);
          const file = world.files.get(attachments[0]!.url.split('/').at(-1)!)!;
          expect(Buffer.from(file.content)).toEqual(Buffer.alloc(100, index));
        } else {
          expect(attachments).toEqual([]);
        }
      }
      expect([...world.files.values()].some((file) => file.name.startsWith('big-'))).toBe(false);

      const before = world.firings.length;
      await pollBoth(4);
      expect(world.firings.length).toBe(before);
      await Promise.all([a.listener.stop(), b.listener.stop()]);
    });
  });
});
