import type { EventFamilySpec, RequestSpec, WorkQueueSpec } from '@weft/contracts';

/**
 * The bus port: NATS in distributed mode, an in-memory transport with the same contract when
 * embedded. Request handlers answer or throw a ProblemError, which reaches the caller as the same
 * ProblemError. Trace context and correlation ids travel in headers.
 */

/** Who is acting: filled by the gateway from the API key, trusted by every service. */
export interface Actor {
  organizationId: string;
  userId: string;
  userName: string;
  apiKeyId?: string;
  /** System keys act across organizations. */
  system: boolean;
  /** When set, the key may only touch these processes. */
  processIds?: string[];
}

export interface MessageContext {
  headers: Record<string, string>;
  actor?: Actor;
  correlationId?: string;
  /** W3C traceparent of the sender. */
  traceparent?: string;
}

export interface SendOptions {
  headers?: Record<string, string>;
  actor?: Actor;
  correlationId?: string;
  timeoutMs?: number;
  /**
   * The reply is an `HttpReply` (`{status, headers?, body?}`): the bus may answer an object or
   * array `body` as a `JsonText` when it has the reply's JSON text anyway. The in-memory bus
   * does (it encodes every reply to measure and copy it); NatsBus answers the body decoded.
   */
  replyBodyAsJsonText?: boolean;
}

export interface PublishOptions extends SendOptions {
  msgId: string;
  json?: string;
}

export interface Subscription {
  unsubscribe(): Promise<void>;
}

export interface WorkMessage<P> {
  payload: P;
  context: MessageContext;
  /** 1 on first delivery. */
  deliveryCount: number;
}

export interface ConsumeOptions<P = unknown> {
  /** Durable consumer name; consumers with the same name share the work. */
  durable: string;
  concurrency?: number;
  /** Redelivered when not acked within this time. */
  ackWaitMs?: number;
  /** Without it a failing message is retried for ever (with backoff): never dropped silently. */
  deadLetter?: DeadLetter<P>;
  /** Delay before a message whose handler threw is delivered again; doubles per attempt. Default 1000. */
  retryDelayMs?: number;
  /** Downstream capacity: no message is taken from the queue while the gate has no free slot. */
  gate?: ConsumeGate;
}

/** Where a message goes once its handler failed `afterDeliveries` times. */
export interface DeadLetter<P> {
  afterDeliveries: number;
  /** Records the message elsewhere (it is then acked); a throw keeps it queued for a later try. */
  record(message: WorkMessage<P>, error: unknown): Promise<void>;
}

/** A counting gate: a message holds a slot from the moment it is taken until its handler settles. */
export interface ConsumeGate {
  /** How many slots are free now (a pull asks for at most that many messages). */
  free(): number;
  /** A slot's release function, or undefined when none is free. */
  tryTake(): (() => void) | undefined;
  /** Resolves once a slot may be free. */
  whenFree(): Promise<void>;
}

/** The stream of an event family: its name and the wildcard of every subject it stores. */
export type EventStreamSpec = Pick<EventFamilySpec<never, unknown>, 'stream' | 'wildcard'>;

export interface PublishedEvent {
  subject: string;
  payload: unknown;
  headers: Record<string, string>;
  /** Stream sequence of the message. */
  sequence: number;
}

/**
 * How an event stream keeps what is published (JetStream's retention policies): `limits` keeps
 * every event up to the stream's limits, for any durable created later; `interest` keeps an event
 * only when a durable existing at its publish takes its subject, and drops it at once otherwise.
 */
export type EventRetention = 'limits' | 'interest';

export interface Bus {
  request<Req, Res>(spec: RequestSpec<Req, Res>, payload: Req, options?: SendOptions): Promise<Res>;
  serve<Req, Res>(
    spec: RequestSpec<Req, Res>,
    handler: (payload: Req, context: MessageContext) => Promise<Res>,
  ): Promise<Subscription>;
  /** Creates the JetStream stream of an event family when missing (publishers and subscribers call it first). */
  ensureEventStream(spec: EventStreamSpec): Promise<void>;
  /**
   * Publish to a JetStream stream; `msgId` deduplicates (Nats-Msg-Id). `json`, when the caller has
   * it, is `JSON.stringify(payload)` and is sent as it is (`payload` is then not read).
   */
  publish(subject: string, payload: unknown, options: PublishOptions): Promise<void>;
  /**
   * False only when an event published on `subject` now would be kept for no one: a stream with
   * interest retention (`EventRetention`) and no durable whose filter takes the subject. A bus
   * without it keeps every event (JetStream's limits retention).
   */
  hasEventInterest?(subject: string): boolean;
  /** Durable subscription to published events (wildcards allowed); resolve to ack. */
  subscribe(
    filter: string,
    options: { durable: string },
    handler: (event: PublishedEvent) => Promise<void>,
  ): Promise<Subscription>;
  enqueue<P>(spec: WorkQueueSpec<P>, payload: P, options?: SendOptions & { msgId?: string }): Promise<void>;
  /** Resolve to ack; throw to have the message redelivered later. */
  consume<P>(
    spec: WorkQueueSpec<P>,
    options: ConsumeOptions<P>,
    handler: (message: WorkMessage<P>) => Promise<void>,
  ): Promise<Subscription>;
  isReady(): Promise<boolean>;
  close(): Promise<void>;
}
