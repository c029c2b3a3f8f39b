import { AckPolicy, jetstreamManager } from '@nats-io/jetstream';
import { workQueue } from '@weft/contracts';
import { createLogger } from '@weft/observability';
import { NatsBus } from '../src/index.js';

const servers = process.env.WEFT_TEST_NATS_URL ?? 'nats://127.0.0.1:4222';

/**
 * An engine's request consumer pulls through the gated loop. A pull that fails (here: the
 * consumer deleted under it, as a server restart or an operator may do) must not end the loop, or
 * that replica would never take work again.
 */
test('a gated work-queue consumer takes work again after a pull failed', async () => {
  const bus = await NatsBus.connect({ servers, logger: createLogger('bus', { level: 'silent' }) });
  const id = crypto.randomUUID().replace(/-/g, '').slice(0, 12);
  const spec = workQueue<{ n: number }>(
    `RECOVER_${id}`.toUpperCase(),
    `weft.test.recover.${id}`,
    ['testing'],
    'testing',
  );
  const jsm = await jetstreamManager(bus.connection);
  const handled: number[] = [];
  let free = true;
  const gate = {
    free: () => (free ? 1 : 0),
    tryTake: () => (free ? () => undefined : undefined),
    whenFree: () => Promise.resolve(),
  };
  const subscription = await bus.consume(spec, { durable: 'engines', gate }, async (message) => {
    handled.push(message.payload.n);
  });
  try {
    await bus.enqueue(spec, { n: 1 });
    await until(() => handled.includes(1));
    // Its ack processed (the work queue dropped it): a consumer made anew must not get it again.
    for (let tries = 0; tries < 200 && (await jsm.streams.info(spec.stream)).state.messages > 0; tries++)
      await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await jsm.streams.info(spec.stream)).state.messages).toBe(0);
    // The pull waiting on the empty queue fails when its consumer goes away.
    await jsm.consumers.delete(spec.stream, 'engines');
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    await jsm.consumers.add(spec.stream, {
      durable_name: 'engines',
      filter_subject: spec.subject,
      ack_policy: AckPolicy.Explicit,
      ack_wait: 30_000_000_000,
    });
    await bus.enqueue(spec, { n: 2 });
    await until(() => handled.includes(2));
    expect(handled).toEqual([1, 2]);
  } finally {
    free = false;
    await subscription.unsubscribe();
    await jsm.streams.delete(spec.stream).catch(() => undefined);
    await bus.close();
  }
}, 60_000);

async function until(done: () => boolean): Promise<void> {
  for (let tries = 0; tries < 200; tries++) {
    if (done()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('never happened');
}
