import { randomUUID } from 'node:crypto';
import { nanos } from '@nats-io/nats-core';
import {
  DEFAULT_EVENTS_STREAM_MAX_AGE_MS,
  DEFAULT_EVENTS_STREAM_MAX_BYTES,
  eventMessageOf,
  JetStreamPublisher,
} from '../src/index.js';
import { openTestJetStream, type TestJetStream } from './support/test-jetstream.js';

/** The published event stream is bounded, so it can never fill the JetStream store the work queues share. */
describe('JetStreamPublisher stream retention', () => {
  let js: TestJetStream;
  beforeEach(async () => {
    js = await openTestJetStream();
  });
  afterEach(() => js.dispose());

  const limitsOf = async () => {
    const { config } = await js.jsm.streams.info(js.stream);
    return { max_age: config.max_age, max_bytes: config.max_bytes, discard: config.discard };
  };

  test('a new stream gets the default age and size limits, oldest discarded first', async () => {
    await js.publisher();
    expect(await limitsOf()).toEqual({
      max_age: nanos(DEFAULT_EVENTS_STREAM_MAX_AGE_MS),
      max_bytes: DEFAULT_EVENTS_STREAM_MAX_BYTES,
      discard: 'old',
    });
  });

  test('a stream created without limits takes the configured ones on the next start', async () => {
    await js.jsm.streams.add({ name: js.stream, subjects: [`${js.prefix}.>`] });
    expect((await limitsOf()).max_bytes).toBe(-1);
    await JetStreamPublisher.create(js.nc, {
      stream: js.stream,
      subjects: [`${js.prefix}.>`],
      maxAgeMs: 3_600_000,
      maxBytes: 50 * 1024 * 1024,
    });
    expect(await limitsOf()).toEqual({ max_age: nanos(3_600_000), max_bytes: 50 * 1024 * 1024, discard: 'old' });
  });

  test('the oldest events go once the byte limit is reached', async () => {
    const publisher = await JetStreamPublisher.create(js.nc, {
      stream: js.stream,
      subjects: [`${js.prefix}.>`],
      maxBytes: 64 * 1024,
    });
    const envelope = (position: number) => ({
      eventId: randomUUID(),
      streamId: 'execution-x',
      streamVersion: position,
      position,
      type: 'NodeCompleted',
      schemaVersion: 1,
      data: { pad: 'x'.repeat(4096) },
      metadata: {},
      recordedAt: new Date(0).toISOString(),
    });
    let previous: string | undefined;
    for (let position = 1; position <= 40; position++) {
      await publisher.publish(
        `${js.prefix}.execution.o.p.NodeCompleted`,
        eventMessageOf(envelope(position)),
        `m-${position}`,
        previous,
      );
      previous = `m-${position}`;
    }
    const { state } = await js.jsm.streams.info(js.stream);
    expect(state.bytes).toBeLessThanOrEqual(64 * 1024);
    expect(state.first_seq).toBeGreaterThan(1);
    expect(state.last_seq).toBe(40);
  });
});
