import { randomUUID } from 'node:crypto';
import { openTestStore, type TestStore } from '../../../libs/event-store/test/support/test-database.js';
import { gmailListenerFactory, outlookListenerFactory, type MailListenerOptions } from '../src/adapters/mail/index.js';
import { MailTestClock } from './support/mail-clock.js';
import {
  ACCOUNT,
  addOAuthConnection,
  oauthConfig,
  startLocalProviders,
  type LocalProviders,
  type ProviderName,
} from './support/mail-providers.js';
import { MailTestWorld, replicaContext, type Replica } from './support/mail-test-context.js';

const T0 = Date.UTC(2026, 10, 23, 9, 0, 0);
const factories = { gmail: gmailListenerFactory, outlook: outlookListenerFactory };

describe.each<ProviderName>(['gmail', 'outlook'])('%s mail polling', (provider) => {
  let testStore: TestStore;
  let clock: MailTestClock;
  let providers: LocalProviders;
  let world: MailTestWorld;

  // One store for the file: each test's process id names its own mailbox stream.
  beforeAll(async () => {
    testStore = await openTestStore('pglite');
  });

  afterAll(async () => {
    await testStore.dispose();
  });

  beforeEach(async () => {
    clock = new MailTestClock(T0);
    providers = await startLocalProviders(clock);
    world = new MailTestWorld();
    addOAuthConnection(world, providers, provider);
  });

  afterEach(async () => {
    await providers.close();
  });

  const listen = async (
    config: Record<string, unknown>,
    options: Partial<MailListenerOptions> = {},
  ): Promise<{ replica: Replica; stop: () => Promise<void> }> => {
    const replica = replicaContext({
      world,
      store: testStore.store,
      clock,
      processId: randomUUID(),
      nodeId: 'in',
      config,
    });
    const listener = factories[provider](providers.options(options))(replica.context);
    await listener.start();
    await clock.parked(1);
    return { replica, stop: () => listener.stop() };
  };

  /** Wakes the listener for its next poll and answers the wait it chose after it. */
  const pollOnce = async (): Promise<number> => {
    clock.advanceToNextWake();
    await clock.parked(1);
    return clock.waits.at(-1)!;
  };

  it('backs off from pollingInterval to 5 minutes while no mail comes, and returns to it when mail arrives', async () => {
    const { replica, stop } = await listen(oauthConfig(provider, { pollingInterval: 2 }));
    expect(clock.waits).toEqual([2_000]);
    const waits: number[] = [];
    for (let n = 0; n < 9; n++) waits.push(await pollOnce());
    expect(waits).toEqual([4_000, 8_000, 16_000, 32_000, 64_000, 128_000, 256_000, 300_000, 300_000]);
    expect(replica.reports.at(-1)).toMatchObject({
      nextRunAt: new Date(clock.now().getTime() + 300_000).toISOString(),
    });
    expect(replica.reports.some((report) => report.state === 'backing_off')).toBe(true);

    providers.mailboxes.deliver(ACCOUNT, {
      from: 'a@x.test',
      subject: 'hi',
      receivedAt: clock.now().getTime() + 1_000,
    });
    expect(await pollOnce()).toBe(2_000);
    expect(world.firings).toHaveLength(1);
    expect(replica.reports.some((report) => report.state === 'listening')).toBe(true);
    expect(await pollOnce()).toBe(2_000);
    expect(await pollOnce()).toBe(4_000);
    await stop();
  });

  it('a 429 is reported and the next poll waits for its Retry-After; the listener goes on afterwards', async () => {
    const { replica, stop } = await listen(oauthConfig(provider));
    providers.identity.throttle(1, 120);
    expect(await pollOnce()).toBe(120_000);
    expect(replica.reports.at(-2)).toMatchObject({
      state: 'failing',
      lastError: { message: expect.stringMatching(/rate limited/) },
    });
    providers.mailboxes.deliver(ACCOUNT, {
      from: 'a@x.test',
      subject: 'after the limit',
      receivedAt: clock.now().getTime() + 1_000,
    });
    await pollOnce();
    expect(world.firings.map((firing) => firing.input.subject)).toEqual(['after the limit']);
    expect(replica.reports.at(-2)).toMatchObject({ lastError: null });
    await stop();
  });

  it('rule 9: includeThread gives every message of the conversation with sender, recipients, body and date', async () => {
    const { stop } = await listen(oauthConfig(provider, { includeThread: true }));
    const first = providers.mailboxes.deliver(ACCOUNT, {
      from: 'a@x.test',
      to: [ACCOUNT, 'other@x.test'],
      subject: 'question',
      text: 'first',
      receivedAt: clock.now().getTime() + 500,
    });
    await pollOnce();
    providers.mailboxes.deliver(ACCOUNT, {
      from: 'b@x.test',
      subject: 'Re: question',
      text: 'second',
      threadId: first.threadId,
      receivedAt: clock.now().getTime() + 2_000,
    });
    await pollOnce();
    await pollOnce();
    expect(world.firings).toHaveLength(2);
    const second = world.firings[1]!.input;
    const date = (at: number): number => (provider === 'outlook' ? Math.floor(at / 1000) * 1000 : at);
    expect(second.thread).toEqual([
      { sender: 'a@x.test', recipients: [ACCOUNT, 'other@x.test'], body: 'first', date: date(first.receivedAt) },
      { sender: 'b@x.test', recipients: [ACCOUNT], body: 'second', date: expect.any(Number) },
    ]);
    await stop();
  });

  it('a claimed email deleted before its start is dropped after the lease; later polls go on', async () => {
    const processId = randomUUID();
    const config = oauthConfig(provider);
    const crashed = replicaContext({
      world,
      store: testStore.store,
      clock,
      processId,
      nodeId: 'in',
      config,
      fire: () => Promise.reject(new Error('crashed before the start')),
    });
    const first = factories[provider](providers.options())(crashed.context);
    await first.start();
    await clock.parked(1);
    const gone = providers.mailboxes.deliver(ACCOUNT, {
      from: 'a@x.test',
      subject: 'soon deleted',
      receivedAt: T0 + 500,
    });
    clock.advance(1_000);
    await clock.parked(1);
    expect(crashed.reports.at(-2)).toMatchObject({ state: 'failing' });
    await first.stop();
    providers.mailboxes.remove(ACCOUNT, gone.id);

    const healthy = replicaContext({ world, store: testStore.store, clock, processId, nodeId: 'in', config });
    const listener = factories[provider](providers.options())(healthy.context);
    await listener.start();
    await clock.parked(1);
    // Past the lease: this poll fetches the claimed email again and finds it gone.
    clock.advance(10_000);
    await clock.parked(1);
    providers.mailboxes.deliver(ACCOUNT, {
      from: 'a@x.test',
      subject: 'still polled',
      receivedAt: clock.now().getTime(),
    });
    await pollOnce();
    expect(healthy.reports.some((report) => report.state === 'failing')).toBe(false);
    expect(world.firings.map((firing) => firing.input.subject)).toEqual(['still polled']);
    const events = await testStore.store.readStream(`mailbox-${processId}-in`);
    expect(
      events.filter((event) => event.type === 'ClaimDropped').map((event) => (event.data as { id: string }).id),
    ).toEqual([gone.id]);
    await listener.stop();
  });

  it('mail received before the trigger started is not new', async () => {
    providers.mailboxes.deliver(ACCOUNT, { from: 'a@x.test', subject: 'old', receivedAt: T0 - 10_000 });
    const { stop } = await listen(oauthConfig(provider));
    await pollOnce();
    expect(world.firings).toEqual([]);
    await stop();
  });

  if (provider === 'outlook') {
    it('watches the named folders of a shared mailbox the account was granted', async () => {
      providers.identity.grantSharedMailbox('team@example.test', ACCOUNT);
      // Delivered before the start so the folders exist; received after it, so they are new.
      const at = T0 + 500;
      const team = 'team@example.test';
      providers.mailboxes.deliver(team, {
        from: 'a@x.test',
        subject: 'in invoices',
        folder: 'Invoices',
        receivedAt: at,
      });
      providers.mailboxes.deliver(team, { from: 'a@x.test', subject: 'in orders', folder: 'Orders', receivedAt: at });
      providers.mailboxes.deliver(team, { from: 'a@x.test', subject: 'in the inbox', receivedAt: at });
      providers.mailboxes.deliver(ACCOUNT, {
        from: 'a@x.test',
        subject: 'own inbox',
        folder: 'Invoices',
        receivedAt: at,
      });
      const { replica, stop } = await listen(
        oauthConfig(provider, { sharedMailbox: 'team@example.test', folders: ['Invoices', 'Orders'] }),
      );
      await pollOnce();
      expect(world.firings.map((firing) => firing.input.subject).sort()).toEqual(['in invoices', 'in orders']);
      expect(world.firings[0]!.input.receiving_account).toBe('team@example.test');
      expect(replica.reports.some((report) => report.state === 'failing')).toBe(false);
      await stop();
    });

    it('a shared mailbox the account may not open is a reported error, retried at the next poll', async () => {
      providers.mailboxes.deliver('boss@example.test', { from: 'a@x.test', subject: 'secret', receivedAt: T0 - 1 });
      const replica = replicaContext({
        world,
        store: testStore.store,
        clock,
        processId: randomUUID(),
        nodeId: 'in',
        config: oauthConfig(provider, { sharedMailbox: 'boss@example.test' }),
      });
      const listener = factories[provider](providers.options())(replica.context);
      await listener.start();
      await clock.parked(1);
      expect(replica.reports.find((report) => report.state === 'failing')).toMatchObject({
        lastError: { message: expect.stringMatching(/403/) },
      });
      expect(world.firings).toEqual([]);
      await listener.stop();
    });
  }
});
