import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  catalogHttp,
  catalogInternal,
  engineQueues,
  type DecryptedConnection,
  type ExecutionRequest,
  type HttpCall,
  type PublishedEventEnvelope,
} from '@weft/contracts';
import { NATS_SERVICE_USERS, NatsBus, type Actor, type MessageContext, type NatsUser } from '@weft/bus';
import { loadConfig } from '@weft/config';
import { eventMessageOf, JetStreamPublisher } from '@weft/event-store';
import { openInfrastructure } from '../src/index.js';
import { startAuthorizedNats, type AuthorizedNats } from './support/authorized-nats-server.js';

/**
 * The users and permissions of infra/nats/auth.conf (generated from the subject map) enforced by a
 * real nats-server: who may ask for secrets, who may send requests carrying an actor, who may read
 * events, and that every service can still do its own work.
 */
const SECRET: DecryptedConnection = {
  id: 'conn-1',
  organizationId: 'org-1',
  type: 'postgres',
  name: 'warehouse',
  data: { password: 'hunter2' },
};
const ACTOR: Actor = { organizationId: 'org-1', userId: 'u-1', userName: 'Ann', system: false };
const CALL: HttpCall = { params: { id: 'p-1' }, query: {}, body: undefined, headers: {} };

/** The server's refusal, as the NATS client reports it (PermissionViolationError, or a RequestError around it). */
const isPermissionViolation = (error: unknown): boolean =>
  error instanceof Error && /^Permissions Violation for (Publish|Subscription) to /.test(error.message);

/** Resolves after `count` calls of the returned function (no timing involved). */
function collector<T>(count: number): { add: (item: T) => void; all: Promise<T[]> } {
  const items: T[] = [];
  let done: (items: T[]) => void = () => undefined;
  const all = new Promise<T[]>((resolve) => (done = resolve));
  return {
    add: (item) => {
      items.push(item);
      if (items.length === count) done(items);
    },
    all,
  };
}

const envelope = (position: number, type: string): PublishedEventEnvelope => ({
  eventId: `e-${position}`,
  streamId: `process-p${position}`,
  streamVersion: 1,
  position,
  type,
  schemaVersion: 1,
  data: {},
  metadata: { organizationId: 'org-1' },
  recordedAt: new Date(0).toISOString(),
});

describe('NATS users and permissions (infra/nats/auth.conf) on a real nats-server', () => {
  let nats: AuthorizedNats;
  const buses: NatsBus[] = [];
  const secretRequests: unknown[] = [];
  const httpContexts: MessageContext[] = [];
  const as = async (user: NatsUser): Promise<NatsBus> => {
    const bus = await nats.connectAs(user);
    buses.push(bus);
    return bus;
  };

  beforeAll(async () => {
    nats = await startAuthorizedNats();
    const catalog = await as('process-catalog');
    await catalog.serve(catalogInternal.getConnectionSecret, async (payload) => {
      secretRequests.push(payload);
      return SECRET;
    });
    await catalog.serve(catalogHttp.getProcess, async (_call, context) => {
      httpContexts.push(context);
      return { status: 200, body: { id: 'p-1' } };
    });
  });

  afterAll(async () => {
    await Promise.all(buses.map((bus) => bus.close()));
    await nats?.stop();
  });

  it('refuses a client without a password or with a wrong one', async () => {
    await expect(
      NatsBus.connect({ servers: nats.url, connection: { maxReconnectAttempts: 0, reconnect: false } }),
    ).rejects.toThrow(/authoriz/i);
    await expect(nats.connectAs('engine', 'not-the-password')).rejects.toThrow(/authoriz/i);
  });

  it('the engine and the trigger may ask the catalog for a decrypted connection', async () => {
    for (const user of ['engine', 'trigger'] as const) {
      const bus = await as(user);
      await expect(
        bus.request(catalogInternal.getConnectionSecret, { connectionId: 'conn-1', organizationId: 'org-1' }),
      ).resolves.toEqual(SECRET);
    }
  });

  it.each(['subscriber', 'gateway', 'testing', 'process-catalog'] as const)(
    '%s may not ask for a secret: the server refuses the request before the catalog sees it',
    async (user) => {
      const bus = await as(user);
      const before = secretRequests.length;
      const refused = await bus
        .request(catalogInternal.getConnectionSecret, { connectionId: 'conn-1', organizationId: 'org-1' })
        .then(
          () => undefined,
          (error: unknown) => error,
        );
      expect(isPermissionViolation(refused)).toBe(true);
      expect(secretRequests.length).toBe(before);
    },
  );

  it('the gateway sends requests carrying an actor; the catalog receives the actor', async () => {
    const gateway = await as('gateway');
    await expect(gateway.request(catalogHttp.getProcess, CALL, { actor: ACTOR })).resolves.toEqual({
      status: 200,
      body: { id: 'p-1' },
    });
    expect(httpContexts.at(-1)?.actor).toEqual(ACTOR);
  });

  it.each(['subscriber', 'engine', 'trigger', 'testing', 'process-catalog'] as const)(
    '%s may not publish a request that carries an actor',
    async (user) => {
      const bus = await as(user);
      const before = httpContexts.length;
      const refused = await bus.request(catalogHttp.getProcess, CALL, { actor: { ...ACTOR, system: true } }).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(isPermissionViolation(refused)).toBe(true);
      expect(httpContexts.length).toBe(before);
    },
  );

  it("nobody overhears another's requests or replies (they carry secrets)", async () => {
    const engine = await as('engine');
    const subscriber = await as('subscriber');
    const attempts = [
      engine.connection.subscribe(catalogInternal.getConnectionSecret.subject),
      subscriber.connection.subscribe('_INBOX.>'),
      subscriber.connection.subscribe('_INBOX.engine.>'),
      engine.connection.subscribe('_INBOX.process-catalog.>'),
    ];
    for (const subscription of attempts) expect(isPermissionViolation(await subscription.closed)).toBe(true);
  });

  it('the trigger and testing enqueue execution requests; only the engine takes them', async () => {
    const engine = await as('engine');
    const received = collector<string>(2);
    await engine.consume(engineQueues.executionRequests, { durable: 'engine-executions' }, async (message) =>
      received.add(message.payload.executionId),
    );
    const request = (executionId: string): ExecutionRequest => ({
      executionId,
      processId: 'p-1',
      organizationId: 'org-1',
      inputData: {},
      source: 'trigger',
      requestedAt: new Date(0).toISOString(),
    });
    await (await as('trigger')).enqueue(engineQueues.executionRequests, request('x-trigger'));
    await (await as('testing')).enqueue(engineQueues.executionRequests, request('x-testing'));
    expect((await received.all).sort()).toEqual(['x-testing', 'x-trigger']);

    const subscriber = await as('subscriber');
    const refusedEnqueue = await subscriber.enqueue(engineQueues.executionRequests, request('x-subscriber')).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(isPermissionViolation(refusedEnqueue)).toBe(true);
    const refusedConsume = await subscriber
      .consume(engineQueues.executionRequests, { durable: 'stolen' }, async () => undefined)
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(isPermissionViolation(refusedConsume)).toBe(true);
  });

  it("every service's outbox relay publishes to WEFT_EVENTS, which the subscriber reads and cannot write", async () => {
    let previous: string | undefined;
    for (const [index, user] of NATS_SERVICE_USERS.entries()) {
      const publisher = await JetStreamPublisher.create((await as(user)).connection);
      const event = envelope(index + 1, `PublishedBy_${user.replace('-', '_')}`);
      await publisher.publish(
        `weft.events.process.org-1.p${index + 1}.${event.type}`,
        eventMessageOf(event),
        event.eventId,
        previous,
      );
      expect(await publisher.lastPublishedPosition()).toBe(index + 1);
      previous = event.eventId;
    }
    const subscriber = await as('subscriber');
    const read = collector<string>(NATS_SERVICE_USERS.length);
    await subscriber.subscribe('weft.events.>', { durable: 'outside-reader' }, async (event) =>
      read.add((event.payload as PublishedEventEnvelope).type),
    );
    expect(await read.all).toEqual(NATS_SERVICE_USERS.map((user) => `PublishedBy_${user.replace('-', '_')}`));
    const forged = await subscriber
      .publish('weft.events.process.org-1.p9.ProcessDeleted', envelope(9, 'ProcessDeleted'), { msgId: 'forged' })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(isPermissionViolation(forged)).toBe(true);
  });

  it('a relay applies new retention to the existing WEFT_EVENTS; the subscriber cannot', async () => {
    const oneHourMs = 3_600_000;
    await JetStreamPublisher.create((await as('gateway')).connection); // the stream exists, with the default retention
    await JetStreamPublisher.create((await as('engine')).connection, { maxAgeMs: oneHourMs });
    const subscriber = await as('subscriber');
    // The engine's update took: with the same retention there is nothing left to change.
    await expect(JetStreamPublisher.create(subscriber.connection, { maxAgeMs: oneHourMs })).resolves.toBeDefined();
    const refused = await JetStreamPublisher.create(subscriber.connection, { maxAgeMs: 2 * oneHourMs }).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(isPermissionViolation(refused)).toBe(true);
  });

  it('a service started with WEFT_NATS_USER/WEFT_NATS_PASSWORD calls, and relays its events, as that user', async () => {
    // A server of its own: the relay resumes after the last position already in WEFT_EVENTS.
    const own = await startAuthorizedNats();
    const dataDir = await mkdtemp(join(tmpdir(), 'weft-nats-auth-infra-'));
    const catalog = await own.connectAs('process-catalog');
    const subscriber = await own.connectAs('subscriber');
    const infrastructure = await openInfrastructure(
      loadConfig({ ...own.envFor('gateway'), WEFT_DATA_DIR: dataDir, WEFT_SECRET_KEY: 'nats-auth-test-key' }),
      'gateway',
    );
    try {
      await catalog.serve(catalogHttp.getProcess, async () => ({ status: 200 }));
      // Its replies arrive under its own inbox prefix, the only one its user may read.
      await expect(infrastructure.bus.request(catalogHttp.getProcess, CALL, { actor: ACTOR })).resolves.toEqual({
        status: 200,
      });
      const read = collector<PublishedEventEnvelope>(1);
      await subscriber.subscribe('weft.events.>', { durable: 'organization-reader' }, async (event) =>
        read.add(event.payload as PublishedEventEnvelope),
      );
      await infrastructure.store.append('organization-o1', [
        { type: 'OrganizationCreated', data: { name: 'O' }, metadata: { organizationId: 'o1' } },
      ]);
      infrastructure.relay.start();
      expect((await read.all).map((event) => event.type)).toEqual(['OrganizationCreated']);
    } finally {
      await infrastructure.close();
      await Promise.all([catalog.close(), subscriber.close()]);
      await own.stop();
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
