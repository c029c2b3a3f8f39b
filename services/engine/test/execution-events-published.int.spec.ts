import {
  allEvents,
  engineHttp,
  executionEventSchemas,
  executionEvents,
  validateAgainst,
  type ExecutionEventType,
  type ExecutionRecord,
  type PublishedEventEnvelope,
} from '@weft/contracts';
import { OutboxRelay } from '@weft/event-store';
import { BusEventPublisher } from '@weft/runtime';
import { GraphBuilder } from './fixtures/graph-builder.js';
import { actorOf, startEngineHarness, type EngineHarness } from './support/engine-harness.js';
import { waitUntil } from './support/wait-until.js';

/** Execution events reach subscribers on weft.events.execution.<org>.<process>.<type>, matching their schemas. */
describe('execution events for subscribers (embedded bus, outbox relay)', () => {
  let harness: EngineHarness;
  let relay: OutboxRelay;
  beforeAll(async () => {
    // A start window no loaded machine outlasts: each quick node's end carries its start.
    harness = await startEngineHarness('embedded', { carriedStartMaxMs: 60_000 });
    relay = new OutboxRelay(harness.store, new BusEventPublisher(harness.bus), { pollMs: 20 });
    relay.start();
  });
  afterAll(async () => {
    await relay.stop();
    await harness.close();
  });

  test('a durable subscriber filtered by organization and process receives every event, valid against its schema', async () => {
    const org = crypto.randomUUID();
    const g = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('Route', 'conditionalNode', {
        mode: 'switch',
        value: '{{input["In"]["kind"]}}',
        cases: [{ label: 'a', equals: 'a' }],
      })
      .node('A', 'outputNode')
      .node('B', 'outputNode')
      .edge('In', 'Route')
      .edge('Route', 'A', 'a')
      .edge('Route', 'B', 'default');
    const process = await harness.catalog.add(g.process({ organization_id: org }));
    await harness.bus.ensureEventStream(allEvents);
    const received: { subject: string; envelope: PublishedEventEnvelope }[] = [];
    const subscription = await harness.bus.subscribe(
      executionEvents.subject(org, process.id),
      { durable: `sub_${org.slice(0, 8)}` },
      async (event) => {
        received.push({ subject: event.subject, envelope: event.payload as PublishedEventEnvelope });
      },
    );
    try {
      const reply = await harness.call(
        engineHttp.testProcess,
        { params: { processId: process.id }, body: { kind: 'a' } },
        actorOf(org),
      );
      const record = reply.body as ExecutionRecord;
      await waitUntil(() => received.some((r) => r.envelope.type === 'ExecutionCompleted'));

      const types = received.map((r) => r.envelope.type);
      // Run at once by the engine it reached (no queue, so no ExecutionAccepted); each node that
      // touches nothing outside records one event, its NodeCompleted carrying its start.
      expect(types[0]).toBe('ExecutionStarted');
      expect(types.at(-1)).toBe('ExecutionCompleted');
      expect([...types].sort()).toEqual(
        ['ExecutionStarted', 'ExecutionCompleted', 'NodeSkipped', ...Array(3).fill('NodeCompleted')].sort(),
      );
      for (const { envelope } of received.filter((r) => r.envelope.type === 'NodeCompleted'))
        expect(envelope.data).toMatchObject({
          nodeName: expect.any(String),
          startedAt: expect.any(String),
          attempt: 1,
        });
      expect(received.map((r) => r.envelope.streamVersion)).toEqual(types.map((_, index) => index + 1));
      for (const { subject, envelope } of received) {
        expect(subject).toBe(`weft.events.execution.${org}.${process.id}.${envelope.type}`);
        expect(envelope.streamId).toBe(`execution-${record.id}`);
        expect(envelope.metadata).toMatchObject({
          organizationId: org,
          processId: process.id,
          actorId: expect.any(String),
        });
        const { schemaVersion, schema } = executionEventSchemas[envelope.type as ExecutionEventType];
        expect(envelope.schemaVersion).toBe(schemaVersion);
        expect(validateAgainst(schema, envelope.data)).toEqual([]);
      }
    } finally {
      await subscription.unsubscribe();
    }
  });
});
