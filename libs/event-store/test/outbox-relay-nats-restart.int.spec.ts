import { randomUUID } from 'node:crypto';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import type { NatsConnection } from '@nats-io/nats-core';
import { eventSubject } from '@weft/contracts';
import { startNatsServer, type TestNatsServer } from '@weft/test-support';
import { JetStreamPublisher, OutboxRelay, POSITION_HEADER, type NewEvent } from '../src/index.js';
import { openTestStore, type TestStore } from './support/test-database.js';

const events = (n: number): NewEvent[] =>
  Array.from({ length: n }, (_, i) => ({
    type: 'NodeCompleted',
    data: { i },
    metadata: { organizationId: 'org-1', processId: 'proc-1' },
  }));

/**
 * nats-server 2.9 forgets a stream's last message id across a restart once that message is older
 * than the stream's duplicate window: a relay resuming by the id's expectation alone was refused
 * ("wrong last msg ID") for good. It resumes by the stream's last sequence, which the server keeps.
 */
describe('OutboxRelay across a NATS server restart', () => {
  let t: TestStore;
  let nats: TestNatsServer;
  let nc: NatsConnection;
  let relay: OutboxRelay | undefined;

  beforeEach(async () => {
    t = await openTestStore('postgres');
    nats = await startNatsServer();
    nc = await connect({ servers: nats.url, maxReconnectAttempts: -1, reconnectTimeWait: 100 });
  });
  afterEach(async () => {
    await relay?.stop();
    await nc.close();
    await nats.stop();
    await t.dispose();
  });

  test('after the last message outlived the duplicate window, the relay still publishes what comes next', async () => {
    const stream = `WEFT_TEST_RESTART_${randomUUID().replaceAll('-', '').slice(0, 12)}`;
    const prefix = `weft-test-${stream}.events`;
    const publisher = await JetStreamPublisher.create(nc, {
      stream,
      subjects: [`${prefix}.>`],
      duplicateWindowMs: 1000,
    });
    const errors: unknown[] = [];
    relay = new OutboxRelay(t.store, publisher, {
      name: `relay-${randomUUID()}`,
      subjectFor: (event) => eventSubject(event).replace(/^weft\.events/, prefix),
      pollMs: 20,
      standbyMs: 20,
      onError: (error) => errors.push(error),
    });
    relay.start();
    await t.store.append(`execution-${randomUUID()}`, events(3));
    await relay.waitForPosition(await t.store.headPosition());

    await new Promise((resolve) => setTimeout(resolve, 1500)); // past the duplicate window
    await nats.restart();
    await t.store.append(`execution-${randomUUID()}`, events(3));
    await relay.waitForPosition(await t.store.headPosition());

    const jsm = await jetstreamManager(nc);
    const info = await jsm.streams.info(stream);
    const positions: number[] = [];
    for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq += 1) {
      const message = await jsm.streams.getMessage(stream, { seq });
      positions.push(Number(message?.header.get(POSITION_HEADER)));
    }
    expect(positions).toEqual((await t.store.readAll()).map((event) => event.position));
  }, 30_000);
});
