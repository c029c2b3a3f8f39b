import { AckPolicy, jetstreamManager, RetentionPolicy } from '@nats-io/jetstream';
import { workQueue } from '@weft/contracts';
import { createLogger } from '@weft/observability';
import { NatsBus } from '../src/index.js';

const servers = process.env.WEFT_TEST_NATS_URL ?? 'nats://127.0.0.1:4222';

/**
 * Releases before dead letters created the engine's consumer with max_deliver 20: the server then
 * stopped redelivering a message nobody had recorded. Consuming now lifts that limit (the
 * server's create-or-update applies the new max_deliver), so only the dead-letter hook gives up.
 */
test('an existing work-queue consumer with a server-side max_deliver is updated to unlimited', async () => {
  const bus = await NatsBus.connect({ servers, logger: createLogger('bus', { level: 'error' }) });
  const id = crypto.randomUUID().replace(/-/g, '').slice(0, 12);
  const spec = workQueue<{ n: number }>(
    `UPGRADE_${id}`.toUpperCase(),
    `weft.test.upgrade.${id}`,
    ['testing'],
    'testing',
  );
  const jsm = await jetstreamManager(bus.connection);
  try {
    await jsm.streams.add({ name: spec.stream, subjects: [spec.subject], retention: RetentionPolicy.Workqueue });
    await jsm.consumers.add(spec.stream, {
      durable_name: 'old-engines',
      filter_subject: spec.subject,
      ack_policy: AckPolicy.Explicit,
      max_deliver: 20,
    });
    const subscription = await bus.consume(spec, { durable: 'old-engines' }, async () => undefined);
    expect((await jsm.consumers.info(spec.stream, 'old-engines')).config.max_deliver).toBe(-1);
    await subscription.unsubscribe();
  } finally {
    await jsm.streams.delete(spec.stream).catch(() => undefined);
    await bus.close();
  }
});
