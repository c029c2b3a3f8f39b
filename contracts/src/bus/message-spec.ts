/**
 * How a NATS subject is declared. Every subject Weft uses is one of these, declared once in
 * contracts/src/bus/subjects.ts; nothing outside contracts/ spells a subject string.
 * The phantom `_req`/`_res`/`_payload` fields carry the payload types for the compiler only.
 */
export type ServiceName = 'gateway' | 'process-catalog' | 'engine' | 'trigger' | 'testing' | 'event-store' | 'any';

/** Request/reply (commands and queries), served by a queue group of the handling service. */
export interface RequestSpec<Req, Res> {
  readonly kind: 'request';
  readonly subject: string;
  readonly sentBy: readonly ServiceName[];
  readonly handledBy: ServiceName;
  readonly _req?: Req;
  readonly _res?: Res;
}

/** A JetStream work queue: each message handled once by one consumer, acked after the work is stored. */
export interface WorkQueueSpec<Payload> {
  readonly kind: 'work-queue';
  readonly stream: string;
  readonly subject: string;
  readonly sentBy: readonly ServiceName[];
  readonly handledBy: ServiceName;
  readonly _payload?: Payload;
}

/** A family of published events on a JetStream stream; `subject(...)` builds the concrete subject. */
export interface EventFamilySpec<Tokens extends unknown[], Payload> {
  readonly kind: 'event';
  readonly stream: string;
  /** Wildcard that matches every subject of the family, for subscribers. */
  readonly wildcard: string;
  readonly subject: (...tokens: Tokens) => string;
  readonly publishedBy: ServiceName;
  /** Services that read the family from its stream (NATS permissions are generated from this). */
  readonly subscribedBy?: readonly ServiceName[];
  readonly _payload?: Payload;
}

export const request = <Req, Res>(
  subject: string,
  sentBy: readonly ServiceName[],
  handledBy: ServiceName,
): RequestSpec<Req, Res> => ({ kind: 'request', subject, sentBy, handledBy });

export const workQueue = <Payload>(
  stream: string,
  subject: string,
  sentBy: readonly ServiceName[],
  handledBy: ServiceName,
): WorkQueueSpec<Payload> => ({ kind: 'work-queue', stream, subject, sentBy, handledBy });

export type RequestOf<S> = S extends RequestSpec<infer Req, unknown> ? Req : never;
export type ReplyOf<S> = S extends RequestSpec<unknown, infer Res> ? Res : never;
export type PayloadOf<S> =
  S extends WorkQueueSpec<infer P> ? P : S extends EventFamilySpec<unknown[], infer P> ? P : never;
