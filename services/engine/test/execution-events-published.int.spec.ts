import {
  allEvents,
  engineHttp,
  executionEventSchemas,
  executionEvents,
  validateAgainst,
  type ExecutionRecord,
  type GraphSnapshotRecordedData,
  type PublishedEventEnvelope,
  type PublishedExecutionEventType,
} from '@weft/contracts';
import { InMemoryBus } from '@weft/bus';
import { OutboxRelay } from '@weft/event-store';
import { BusEventPublisher } from '@weft/runtime';
import { graphSnapshotId } from '../src/domain/graph/graph-snapshot-ids.js';
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

      // The graph is recorded once, in its own stream, before the first start that names it.
      const [graph, ...run] = received;
      const graphData = graph!.envelope.data as GraphSnapshotRecordedData;
      expect(graph!.envelope).toMatchObject({
        type: 'GraphSnapshotRecorded',
        streamId: `execution-graph-${process.id}-${graphData.graphSnapshotId}`,
        streamVersion: 1,
        data: { processId: process.id, organizationId: org, processRevision: process.revision },
      });
      expect(graphData.graphSnapshot.nodes.map((node) => node.id)).toEqual(process.nodes.map((node) => node.id));
      expect(graphData.graphSnapshotId).toBe(graphSnapshotId(graphData.graphSnapshot));
      const types = run.map((r) => r.envelope.type);
      // Run at once by the engine it reached (no queue, so no ExecutionAccepted); each node that
      // touches nothing outside records one event, its NodeCompleted carrying its start.
      expect(types[0]).toBe('ExecutionStarted');
      expect(types.at(-1)).toBe('ExecutionCompleted');
      expect([...types].sort()).toEqual(
        ['ExecutionStarted', 'ExecutionCompleted', 'NodeSkipped', ...Array(3).fill('NodeCompleted')].sort(),
      );
      // The start names the graph instead of carrying it.
      expect(run[0]!.envelope.data).toMatchObject({ graphSnapshotId: graphData.graphSnapshotId });
      expect(run[0]!.envelope.data).not.toHaveProperty('graphSnapshot');
      for (const { envelope } of run.filter((r) => r.envelope.type === 'NodeCompleted'))
        expect(envelope.data).toMatchObject({
          nodeName: expect.any(String),
          startedAt: expect.any(String),
          attempt: 1,
        });
      expect(run.map((r) => r.envelope.streamVersion)).toEqual(types.map((_, index) => index + 1));
      for (const { subject, envelope } of received) {
        expect(subject).toBe(`weft.events.execution.${org}.${process.id}.${envelope.type}`);
        if (envelope !== graph!.envelope) expect(envelope.streamId).toBe(`execution-${record.id}`);
        expect(envelope.metadata).toMatchObject({
          organizationId: org,
          processId: process.id,
          actorId: expect.any(String),
        });
        const { schemaVersion, schema } = executionEventSchemas[envelope.type as PublishedExecutionEventType];
        expect(envelope.schemaVersion).toBe(schemaVersion);
        expect(validateAgainst(schema, envelope.data)).toEqual([]);
      }

      // A second run of the same graph records nothing more: its start names the graph recorded above.
      const again = (
        await harness.call(
          engineHttp.testProcess,
          { params: { processId: process.id }, body: { kind: 'b' } },
          actorOf(org),
        )
      ).body as ExecutionRecord;
      await waitUntil(() =>
        received.some(
          (r) => r.envelope.type === 'ExecutionCompleted' && r.envelope.streamId === `execution-${again.id}`,
        ),
      );
      expect(received.filter((r) => r.envelope.type === 'GraphSnapshotRecorded')).toHaveLength(1);
      const secondStart = received.find(
        (r) => r.envelope.type === 'ExecutionStarted' && r.envelope.streamId === `execution-${again.id}`,
      );
      expect(secondStart!.envelope.data).toMatchObject({ graphSnapshotId: graphData.graphSnapshotId });
    } finally {
      await subscription.unsubscribe();
    }
  });

  test('on the embedded bus (interest retention) a run is published only where a durable takes it; the relay passes over the rest', async () => {
    const org = crypto.randomUUID();
    const simple = () =>
      new GraphBuilder()
        .node('In', 'inputNode', { triggerType: 'manual' })
        .node('Out', 'outputNode')
        .edge('In', 'Out')
        .process({ organization_id: org });
    const [followed, unfollowed] = [await harness.catalog.add(simple()), await harness.catalog.add(simple())];
    const bus = new InMemoryBus({ eventRetention: 'interest' });
    await bus.ensureEventStream(allEvents);
    const subjectsOf = (into: string[]) => async (event: { subject: string }) => void into.push(event.subject);
    const onFollowed: string[] = [];
    const subscription = await bus.subscribe(
      executionEvents.subject(org, followed.id),
      { durable: `followed_${org.slice(0, 8)}` },
      subjectsOf(onFollowed),
    );
    const own = new OutboxRelay(harness.store, new BusEventPublisher(bus), { pollMs: 20, name: `interest-${org}` });
    own.start();
    try {
      for (const process of [followed, unfollowed])
        await harness.call(engineHttp.testProcess, { params: { processId: process.id }, body: {} }, actorOf(org));
      await own.waitForPosition(await harness.store.headPosition());
      await waitUntil(() => onFollowed.some((subject) => subject.endsWith('.ExecutionCompleted')));
      // A durable created now gets what was kept: the followed process's run, nothing of the other.
      // Delivered in order, so once it has a run made after it subscribed, it had all that was kept.
      const onOrganization: string[] = [];
      const late = await bus.subscribe(
        executionEvents.subject(org),
        { durable: `late_${org.slice(0, 8)}` },
        subjectsOf(onOrganization),
      );
      await harness.call(engineHttp.testProcess, { params: { processId: followed.id }, body: {} }, actorOf(org));
      await waitUntil(() => onOrganization.filter((subject) => subject.endsWith('.ExecutionCompleted')).length === 2);
      expect(onOrganization.slice(0, onFollowed.length)).toEqual(onFollowed);
      expect(onOrganization.filter((subject) => !subject.includes(`.${followed.id}.`))).toEqual([]);
      await late.unsubscribe();
    } finally {
      await own.stop();
      await subscription.unsubscribe();
      await bus.close();
    }
  });
});
