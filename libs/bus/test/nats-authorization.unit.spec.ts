import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import * as contracts from '@weft/contracts';
import { catalogInternal, engineQueues, serviceRoutes } from '@weft/contracts';
import {
  NATS_SERVICE_USERS,
  natsAuthorization,
  renderNatsAuthorization,
  subjectMatches,
  subjectSpecsOf,
  type NatsUser,
} from '../src/index.js';

const users = natsAuthorization(subjectSpecsOf(contracts));
const permissionsOf = (user: NatsUser) => users.find((permissions) => permissions.user === user)!;
const allowed = (list: string[], subject: string): boolean => list.some((entry) => subjectMatches(entry, subject));
const publishers = (subject: string): NatsUser[] =>
  users.filter((permissions) => allowed(permissions.publish, subject)).map((permissions) => permissions.user);
const subscribers = (subject: string): NatsUser[] =>
  users.filter((permissions) => allowed(permissions.subscribe, subject)).map((permissions) => permissions.user);

describe('NATS authorization generated from the subject map', () => {
  it('infra/nats/auth.conf is what `pnpm nats-config` generates from contracts/src/bus', () => {
    const committed = readFileSync(resolve(__dirname, '../../../infra/nats/auth.conf'), 'utf8');
    expect(committed).toBe(renderNatsAuthorization(users));
  });

  it('only the gateway may send the requests that carry an actor (the HTTP routes)', () => {
    expect(serviceRoutes.length).toBeGreaterThan(0);
    for (const route of serviceRoutes) expect(publishers(route.spec.subject)).toEqual(['gateway']);
  });

  it('only the engine and the trigger may ask for secrets, and only the catalog hears the question', () => {
    const subject = catalogInternal.getConnectionSecret.subject;
    expect(publishers(subject).sort()).toEqual(['engine', 'trigger']);
    expect(subscribers(subject)).toEqual(['process-catalog']);
  });

  it('the chunks of a large request or reply travel only between its senders and its handling service', () => {
    const spec = catalogInternal.getConnectionSecret;
    const chunkSubject = `${spec.subject}.chunked.AbC123`;
    expect(publishers(chunkSubject).sort()).toEqual(['engine', 'trigger']);
    expect(subscribers(chunkSubject)).toEqual(['process-catalog']);
    expect(publishers(`${catalogInternal.getProcess.subject}.chunked.AbC123`)).not.toContain('subscriber');
  });

  it('the engine alone takes execution requests; the trigger and testing may enqueue them', () => {
    const stream = engineQueues.executionRequests.stream;
    expect(publishers(`$JS.API.CONSUMER.MSG.NEXT.${stream}.engine-executions`)).toEqual(['engine']);
    expect(publishers(`$JS.ACK.${stream}.engine-executions.1.1.1.1.1.0`)).toEqual(['engine']);
    expect(publishers(engineQueues.executionRequests.subject).sort()).toEqual(['engine', 'testing', 'trigger']);
  });

  it('the subscriber publishes nothing but the JetStream calls that read WEFT_EVENTS', () => {
    const subscriber = permissionsOf('subscriber');
    for (const subject of subscriber.publish) {
      expect(subject).toMatch(/^\$JS\.(API\.INFO|API\.STREAM\.NAMES|(API\.[A-Z.]+|ACK)\.WEFT_EVENTS\b)/);
    }
    expect(
      subscriber.publish.filter((subject) => /CREATE\.WEFT_EVENTS$|DELETE|PURGE|MSG\.DELETE/.test(subject)),
    ).toEqual([]);
    expect(subscriber.subscribe.sort()).toEqual(['_INBOX.subscriber.>', 'weft.events.>']);
    expect(subscriber.allowResponses).toBe(false);
  });

  it('no user can read the replies meant for another (they carry secrets)', () => {
    for (const permissions of users) {
      const inboxes = permissions.subscribe.filter((subject) => subject.startsWith('_INBOX'));
      expect(inboxes).toEqual([`_INBOX.${permissions.user}.>`]);
      expect(permissions.publish.filter((subject) => subject.startsWith('_INBOX'))).toEqual([]);
    }
  });

  it('every service may publish committed events (each runs an outbox relay)', () => {
    for (const user of NATS_SERVICE_USERS)
      expect(publishers('weft.events.process.org.p.ProcessCreated')).toContain(user);
    expect(publishers('weft.events.process.org.p.ProcessCreated')).not.toContain('subscriber');
  });
});
