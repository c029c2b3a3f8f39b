import { randomUUID } from 'node:crypto';
import { ACCOUNT, addOAuthConnection, oauthConfig, type ProviderName } from './support/mail-providers.js';
import { MailRig, T0 } from './support/mail-rig.js';

describe.each<ProviderName>(['gmail', 'outlook'])('%s mail polling', (provider) => {
  const rig = MailRig.use((rig) => addOAuthConnection(rig.world, rig.providers, provider));

  it('backs off from pollingInterval to 5 minutes while no mail comes, and returns to it when mail arrives', async () => {
    const { replica, listener } = await rig.listen(provider, oauthConfig(provider, { pollingInterval: 2 }));
    expect(rig.clock.waits).toEqual([2_000]);
    const waits: number[] = [];
    for (let n = 0; n < 9; n++) waits.push(await rig.pollOnce());
    expect(waits).toEqual([4_000, 8_000, 16_000, 32_000, 64_000, 128_000, 256_000, 300_000, 300_000]);
    expect(replica.reports.at(-1)).toMatchObject({
      nextRunAt: new Date(rig.clock.now().getTime() + 300_000).toISOString(),
    });
    expect(replica.reports.some((report) => report.state === 'backing_off')).toBe(true);

    rig.providers.mailboxes.deliver(ACCOUNT, {
      from: 'a@x.test',
      subject: 'hi',
      receivedAt: rig.clock.now().getTime() + 1_000,
    });
    expect(await rig.pollOnce()).toBe(2_000);
    expect(rig.world.firings).toHaveLength(1);
    expect(replica.reports.some((report) => report.state === 'listening')).toBe(true);
    expect(await rig.pollOnce()).toBe(2_000);
    expect(await rig.pollOnce()).toBe(4_000);
    await listener.stop();
  });

  it('a 429 is reported and the next poll waits for its Retry-After; the listener goes on afterwards', async () => {
    const { replica, listener } = await rig.listen(provider, oauthConfig(provider));
    rig.providers.identity.throttle(1, 120);
    expect(await rig.pollOnce()).toBe(120_000);
    expect(replica.reports.at(-2)).toMatchObject({
      state: 'failing',
      lastError: { message: expect.stringMatching(/rate limited/) },
    });
    rig.providers.mailboxes.deliver(ACCOUNT, {
      from: 'a@x.test',
      subject: 'after the limit',
      receivedAt: rig.clock.now().getTime() + 1_000,
    });
    await rig.pollOnce();
    expect(rig.world.firings.map((firing) => firing.input.subject)).toEqual(['after the limit']);
    expect(replica.reports.at(-2)).toMatchObject({ lastError: null });
    await listener.stop();
  });

  it('rule 9: includeThread gives every message of the conversation with sender, recipients, body and date', async () => {
    const { listener } = await rig.listen(provider, oauthConfig(provider, { includeThread: true }));
    const first = rig.providers.mailboxes.deliver(ACCOUNT, {
      from: 'a@x.test',
      to: [ACCOUNT, 'other@x.test'],
      subject: 'question',
      text: 'first',
      receivedAt: rig.clock.now().getTime() + 500,
    });
    await rig.pollOnce();
    rig.providers.mailboxes.deliver(ACCOUNT, {
      from: 'b@x.test',
      subject: 'Re: question',
      text: 'second',
      threadId: first.threadId,
      receivedAt: rig.clock.now().getTime() + 2_000,
    });
    await rig.pollOnce();
    await rig.pollOnce();
    expect(rig.world.firings).toHaveLength(2);
    const second = rig.world.firings[1]!.input;
    const date = (at: number): number => (provider === 'outlook' ? Math.floor(at / 1000) * 1000 : at);
    expect(second.thread).toEqual([
      { sender: 'a@x.test', recipients: [ACCOUNT, 'other@x.test'], body: 'first', date: date(first.receivedAt) },
      { sender: 'b@x.test', recipients: [ACCOUNT], body: 'second', date: expect.any(Number) },
    ]);
    await listener.stop();
  });

  it('a claimed email deleted before its start is dropped after the lease; later polls go on', async () => {
    const processId = randomUUID();
    const config = oauthConfig(provider);
    const { replica: crashed, listener: first } = rig.listener(provider, config, {
      processId,
      fire: () => Promise.reject(new Error('crashed before the start')),
    });
    await first.start();
    await rig.clock.parked(1);
    const gone = rig.providers.mailboxes.deliver(ACCOUNT, {
      from: 'a@x.test',
      subject: 'soon deleted',
      receivedAt: T0 + 500,
    });
    rig.clock.advance(1_000);
    await rig.clock.parked(1);
    expect(crashed.reports.at(-2)).toMatchObject({ state: 'failing' });
    await first.stop();
    rig.providers.mailboxes.remove(ACCOUNT, gone.id);

    const { replica: healthy, listener } = rig.listener(provider, config, { processId });
    await listener.start();
    await rig.clock.parked(1);
    // Past the lease: this poll fetches the claimed email again and finds it gone.
    rig.clock.advance(10_000);
    await rig.clock.parked(1);
    rig.providers.mailboxes.deliver(ACCOUNT, {
      from: 'a@x.test',
      subject: 'still polled',
      receivedAt: rig.clock.now().getTime(),
    });
    await rig.pollOnce();
    expect(healthy.reports.some((report) => report.state === 'failing')).toBe(false);
    expect(rig.world.firings.map((firing) => firing.input.subject)).toEqual(['still polled']);
    const events = await rig.testStore.store.readStream(`mailbox-${processId}-in`);
    expect(
      events.filter((event) => event.type === 'ClaimDropped').map((event) => (event.data as { id: string }).id),
    ).toEqual([gone.id]);
    await listener.stop();
  });

  it('mail received before the trigger started is not new', async () => {
    rig.providers.mailboxes.deliver(ACCOUNT, { from: 'a@x.test', subject: 'old', receivedAt: T0 - 10_000 });
    const { listener } = await rig.listen(provider, oauthConfig(provider));
    await rig.pollOnce();
    expect(rig.world.firings).toEqual([]);
    await listener.stop();
  });

  if (provider === 'outlook') {
    it('watches the named folders of a shared mailbox the account was granted', async () => {
      rig.providers.identity.grantSharedMailbox('team@example.test', ACCOUNT);
      // Delivered before the start so the folders exist; received after it, so they are new.
      const at = T0 + 500;
      const team = 'team@example.test';
      rig.providers.mailboxes.deliver(team, {
        from: 'a@x.test',
        subject: 'in invoices',
        folder: 'Invoices',
        receivedAt: at,
      });
      rig.providers.mailboxes.deliver(team, {
        from: 'a@x.test',
        subject: 'in orders',
        folder: 'Orders',
        receivedAt: at,
      });
      rig.providers.mailboxes.deliver(team, { from: 'a@x.test', subject: 'in the inbox', receivedAt: at });
      rig.providers.mailboxes.deliver(ACCOUNT, {
        from: 'a@x.test',
        subject: 'own inbox',
        folder: 'Invoices',
        receivedAt: at,
      });
      const { replica, listener } = await rig.listen(
        provider,
        oauthConfig(provider, { sharedMailbox: 'team@example.test', folders: ['Invoices', 'Orders'] }),
      );
      await rig.pollOnce();
      expect(rig.world.firings.map((firing) => firing.input.subject).sort()).toEqual(['in invoices', 'in orders']);
      expect(rig.world.firings[0]!.input.receiving_account).toBe('team@example.test');
      expect(replica.reports.some((report) => report.state === 'failing')).toBe(false);
      await listener.stop();
    });

    it('a shared mailbox the account may not open is a reported error, retried at the next poll', async () => {
      rig.providers.mailboxes.deliver('boss@example.test', { from: 'a@x.test', subject: 'secret', receivedAt: T0 - 1 });
      const { replica, listener } = rig.listener(
        provider,
        oauthConfig(provider, { sharedMailbox: 'boss@example.test' }),
      );
      await listener.start();
      await rig.clock.parked(1);
      expect(replica.reports.find((report) => report.state === 'failing')).toMatchObject({
        lastError: { message: expect.stringMatching(/403/) },
      });
      expect(rig.world.firings).toEqual([]);
      await listener.stop();
    });
  }
});
