import { randomUUID } from 'node:crypto';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/nats-core';
import { connect } from '@nats-io/transport-node';
import { eventSubject, type PublishedEventEnvelope } from '@weft/contracts';
import { JetStreamPublisher, POSITION_HEADER, type StoredEvent } from '../../src/index.js';

export interface PublishedMessage {
  seq: number;
  subject: string;
  msgId: string | undefined;
  position: number;
  envelope: PublishedEventEnvelope;
}

/** A JetStream stream and subject prefix of this test alone, never WEFT_EVENTS. */
export interface TestJetStream {
  nc: NatsConnection;
  jsm: JetStreamManager;
  stream: string;
  prefix: string;
  subjectFor(event: StoredEvent): string;
  publisher(): Promise<JetStreamPublisher>;
  messages(): Promise<PublishedMessage[]>;
  dispose(): Promise<void>;
}

export async function openTestJetStream(): Promise<TestJetStream> {
  const url = process.env.WEFT_TEST_NATS_URL;
  if (!url) throw new Error('WEFT_TEST_NATS_URL is not set (run through scripts/run-tests.sh)');
  const nc = await connect({ servers: url });
  const jsm = await jetstreamManager(nc);
  const id = randomUUID().replaceAll('-', '').slice(0, 12);
  const stream = `WEFT_TEST_EVENTS_${id}`;
  const prefix = `weft-test-${id}.events`;
  return {
    nc,
    jsm,
    stream,
    prefix,
    subjectFor: (event) => eventSubject(event).replace(/^weft\.events/, prefix),
    publisher: () => JetStreamPublisher.create(nc, { stream, subjects: [`${prefix}.>`] }),
    async messages() {
      const info = await jsm.streams.info(stream);
      const messages: PublishedMessage[] = [];
      for (let seq = info.state.first_seq; seq <= info.state.last_seq && info.state.messages > 0; seq += 1) {
        const message = await jsm.streams.getMessage(stream, { seq });
        if (!message) continue;
        messages.push({
          seq,
          subject: message.subject,
          msgId: message.header.get('Nats-Msg-Id') || undefined,
          position: Number(message.header.get(POSITION_HEADER)),
          envelope: message.json<PublishedEventEnvelope>(),
        });
      }
      return messages;
    },
    async dispose() {
      await jsm.streams.delete(stream).catch(() => false);
      await nc.close();
    },
  };
}
