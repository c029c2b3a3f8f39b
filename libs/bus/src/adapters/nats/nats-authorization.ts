import type { EventFamilySpec, RequestSpec, ServiceName, WorkQueueSpec } from '@weft/contracts';
import { subjectMatches } from '../../subject-pattern.js';
import { natsChunkSubjects, workChunkStream, workChunkSubjects } from './nats-chunk-subjects.js';

/**
 * NATS users and their subject permissions, derived from the subject map in contracts/src/bus
 * (who sends and who handles each subject), so the server's authorization cannot drift from the
 * code. infra/nats/auth.conf is this rendered (`pnpm nats-config`).
 */

/** One NATS user per service; the names are the services' names in the subject map. */
export const NATS_SERVICE_USERS = ['gateway', 'process-catalog', 'engine', 'trigger', 'testing'] as const;
export type NatsServiceUser = (typeof NATS_SERVICE_USERS)[number];
/** Outside services that read published events: consume WEFT_EVENTS, publish nothing else. */
export const NATS_SUBSCRIBER_USER = 'subscriber';
export type NatsUser = NatsServiceUser | typeof NATS_SUBSCRIBER_USER;

export interface NatsUserPermissions {
  user: NatsUser;
  publish: string[];
  subscribe: string[];
  /** May publish to the reply subject of a request it received (once), and nowhere else in _INBOX. */
  allowResponses: boolean;
}

/** Every connection gets its replies under its own prefix, so no user can read another's replies (secrets). */
export const natsInboxPrefix = (user: string): string => `_INBOX.${user}`;

/** The environment variable nats-server reads a user's password from (auth.conf references it). */
export const natsPasswordVariable = (user: NatsUser): string =>
  `WEFT_NATS_${user.toUpperCase().replace(/-/g, '_')}_PASSWORD`;

type SubjectSpec = RequestSpec<unknown, unknown> | WorkQueueSpec<unknown> | EventFamilySpec<never, unknown>;

const SPEC_KINDS = new Set(['request', 'work-queue', 'event']);
const isSpec = (value: unknown): value is SubjectSpec =>
  typeof value === 'object' && value !== null && SPEC_KINDS.has((value as { kind?: unknown }).kind as string);

/** Every subject spec among a module's exports: exported specs and the groups (objects) of specs. */
export function subjectSpecsOf(moduleExports: Record<string, unknown>): SubjectSpec[] {
  const found = new Set<SubjectSpec>();
  for (const value of Object.values(moduleExports)) {
    if (isSpec(value)) found.add(value);
    else if (typeof value === 'object' && value !== null && !Array.isArray(value)) {
      for (const member of Object.values(value)) if (isSpec(member)) found.add(member);
    }
  }
  return [...found];
}

/** Whom a service name in the map stands for: every service runs an outbox relay ('event-store'). */
const usersOf = (names: readonly ServiceName[]): NatsServiceUser[] =>
  names.flatMap((name) => (name === 'any' || name === 'event-store' ? [...NATS_SERVICE_USERS] : [name]));

// JetStream API subjects (https://docs.nats.io/reference/reference-protocols/nats_api_reference).
const jsApi = {
  accountInfo: '$JS.API.INFO',
  streamNames: '$JS.API.STREAM.NAMES',
  streamInfo: (stream: string) => `$JS.API.STREAM.INFO.${stream}`,
  streamCreate: (stream: string) => `$JS.API.STREAM.CREATE.${stream}`,
  streamUpdate: (stream: string) => `$JS.API.STREAM.UPDATE.${stream}`,
  streamMessageGet: (stream: string) => `$JS.API.STREAM.MSG.GET.${stream}`,
  streamPurge: (stream: string) => `$JS.API.STREAM.PURGE.${stream}`,
  /** Create, read and pull from durable consumers of one stream; ack its messages. */
  consumer: (stream: string) => [
    `$JS.API.CONSUMER.CREATE.${stream}.>`,
    `$JS.API.CONSUMER.DURABLE.CREATE.${stream}.>`,
    `$JS.API.CONSUMER.INFO.${stream}.>`,
    `$JS.API.CONSUMER.MSG.NEXT.${stream}.>`,
    `$JS.ACK.${stream}.>`,
  ],
};

class PermissionSet {
  readonly publish = new Set<string>();
  readonly subscribe = new Set<string>();
  allowResponses = false;

  constructor(user: NatsUser) {
    // Every NatsBus asks for the account's JetStream info on connect; replies come to its own inbox.
    this.publish.add(jsApi.accountInfo);
    this.subscribe.add(`${natsInboxPrefix(user)}.>`);
  }

  /** Reads a stream through durable consumers, as NatsBus.subscribe and consume do. */
  readStream(stream: string): void {
    this.publish.add(jsApi.streamNames);
    this.publish.add(jsApi.streamInfo(stream));
    for (const subject of jsApi.consumer(stream)) this.publish.add(subject);
  }
}

/** The permissions of every user, from the subject specs (see subjectSpecsOf). */
export function natsAuthorization(specs: readonly SubjectSpec[]): NatsUserPermissions[] {
  const sets = new Map<NatsUser, PermissionSet>();
  const of = (user: NatsUser): PermissionSet => {
    let set = sets.get(user);
    if (!set) sets.set(user, (set = new PermissionSet(user)));
    return set;
  };
  for (const user of [...NATS_SERVICE_USERS, NATS_SUBSCRIBER_USER] as const) of(user);
  for (const spec of specs) {
    if (spec.kind === 'request') {
      // A message over max_payload goes in chunks to the subject of the replica that took its first one.
      const chunks = natsChunkSubjects(spec.subject);
      for (const user of usersOf(spec.sentBy)) of(user).publish.add(spec.subject).add(chunks);
      for (const user of usersOf([spec.handledBy])) {
        of(user).subscribe.add(spec.subject).add(chunks);
        of(user).allowResponses = true;
      }
    } else if (spec.kind === 'work-queue') {
      // Senders and handlers both create the stream when missing (whoever comes first).
      for (const user of usersOf([...spec.sentBy, spec.handledBy])) {
        of(user).publish.add(jsApi.streamInfo(spec.stream));
        of(user).publish.add(jsApi.streamCreate(spec.stream));
      }
      // A message over max_payload: senders store its chunks (and remove a duplicate's), the handler
      // reads them and removes them once handled (nats-large-work.ts).
      const chunks = workChunkStream(spec.stream);
      for (const user of usersOf(spec.sentBy)) {
        of(user).publish.add(spec.subject).add(workChunkSubjects(spec.subject));
        for (const subject of [jsApi.streamInfo(chunks), jsApi.streamCreate(chunks), jsApi.streamPurge(chunks)]) {
          of(user).publish.add(subject);
        }
      }
      for (const user of usersOf([spec.handledBy])) {
        of(user).readStream(spec.stream);
        of(user).publish.add(jsApi.streamMessageGet(chunks)).add(jsApi.streamPurge(chunks));
      }
    } else {
      // The outbox relay creates the stream (or applies new retention to it), publishes, and reads
      // its last message to resume.
      for (const user of usersOf([spec.publishedBy])) {
        const set = of(user);
        set.publish.add(spec.wildcard);
        set.publish.add(jsApi.streamInfo(spec.stream));
        set.publish.add(jsApi.streamCreate(spec.stream));
        set.publish.add(jsApi.streamUpdate(spec.stream));
        set.publish.add(jsApi.streamMessageGet(spec.stream));
      }
      for (const user of [...usersOf(spec.subscribedBy ?? []), NATS_SUBSCRIBER_USER] as const) {
        of(user).readStream(spec.stream);
        of(user).subscribe.add(spec.wildcard);
      }
    }
  }
  return [...sets].map(([user, set]) => ({
    user,
    publish: withoutCovered(set.publish),
    subscribe: withoutCovered(set.subscribe),
    allowResponses: set.allowResponses,
  }));
}

/** Sorted, without the subjects another entry's wildcard already allows (weft.events.execution.> under weft.events.>). */
const withoutCovered = (subjects: Set<string>): string[] =>
  [...subjects]
    .filter((subject) => ![...subjects].some((other) => other !== subject && subjectMatches(other, subject)))
    .sort();

const list = (subjects: string[], indent: string): string =>
  `[\n${subjects.map((subject) => `${indent}  ${JSON.stringify(subject)}`).join('\n')}\n${indent}]`;

/** nats-server configuration (included by infra/nats/nats.conf) for the users. */
export function renderNatsAuthorization(users: readonly NatsUserPermissions[]): string {
  const blocks = users.map((permissions) =>
    [
      '    {',
      `      user: ${JSON.stringify(permissions.user)}`,
      `      password: $${natsPasswordVariable(permissions.user)}`,
      '      permissions: {',
      `        publish: { allow: ${list(permissions.publish, '        ')} }`,
      `        subscribe: { allow: ${list(permissions.subscribe, '        ')} }`,
      ...(permissions.allowResponses ? ['        allow_responses: true'] : []),
      '      }',
      '    }',
    ].join('\n'),
  );
  return [
    '# GENERATED by `pnpm nats-config` from the subject map in contracts/src/bus: do not edit.',
    '# One user per service (its password from the variable named here, in the environment of',
    '# nats-server), plus `subscriber`, read-only on WEFT_EVENTS for outside services (infra/README.md).',
    'authorization {',
    '  users: [',
    blocks.join('\n'),
    '  ]',
    '}',
    '',
  ].join('\n');
}
