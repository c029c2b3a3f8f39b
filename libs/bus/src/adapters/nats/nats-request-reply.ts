import { errors, type Msg, type NatsConnection } from '@nats-io/transport-node';
import { ProblemError, type RequestSpec } from '@weft/contracts';
import { extractTraceContext, withSpan, type Logger } from '@weft/observability';
import type { MessageContext, SendOptions, Subscription } from '../../bus.js';
import { DEFAULT_REQUEST_TIMEOUT_MS } from '../../bus-defaults.js';
import { InFlight } from '../../in-flight.js';
import { decodeJson, encodeJson } from '../../json-payload.js';
import { HEADER, messageContext, outgoingHeaders } from '../../message-headers.js';
import { problemFromError } from '../../problem-reply.js';
import { fromNatsHeaders, toNatsHeaders } from './nats-headers.js';

const isNoResponders = (error: unknown): boolean =>
  error instanceof errors.NoRespondersError || (error instanceof errors.RequestError && error.isNoResponders());

/** Sends a request and turns the reply (or its absence) into a result or a ProblemError. */
export async function natsRequest<Req, Res>(
  nc: NatsConnection,
  spec: RequestSpec<Req, Res>,
  payload: Req,
  options: SendOptions = {},
): Promise<Res> {
  return withSpan(
    `request ${spec.subject}`,
    { 'messaging.system': 'nats', 'messaging.destination.name': spec.subject },
    async () => {
      const timeout = options.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
      let reply: Msg;
      try {
        reply = await nc.request(spec.subject, encodeJson(payload), {
          timeout,
          headers: toNatsHeaders(outgoingHeaders(options)),
        });
      } catch (error) {
        if (isNoResponders(error)) throw new ProblemError(503, `No service answers ${spec.subject}.`);
        if (error instanceof errors.TimeoutError) {
          throw new ProblemError(504, `${spec.subject} did not answer within ${timeout} ms.`);
        }
        throw error;
      }
      if (reply.headers?.get(HEADER.problem) === '1') throw ProblemError.fromProblem(decodeJson(reply.data));
      return decodeJson<Res>(reply.data);
    },
    { kind: 'client' },
  );
}

/**
 * Answers requests on `spec.subject` in the queue group of the handling service, so replicas
 * share the load and each request is answered once.
 */
export function natsServe<Req, Res>(
  nc: NatsConnection,
  spec: RequestSpec<Req, Res>,
  handler: (payload: Req, context: MessageContext) => Promise<Res>,
  logger: Logger,
): Subscription {
  const inFlight = new InFlight();
  const answer = async (msg: Msg): Promise<void> => {
    const headers = fromNatsHeaders(msg.headers);
    await withSpan(
      `serve ${spec.subject}`,
      { 'messaging.system': 'nats', 'messaging.destination.name': spec.subject },
      async () => {
        let body: Uint8Array;
        let problem = false;
        try {
          const payload = decodeRequest<Req>(msg.data);
          body = encodeJson(await handler(payload, messageContext(headers)));
        } catch (error) {
          problem = true;
          body = encodeJson(problemFromError(error, logger, spec.subject));
        }
        if (!msg.reply) return;
        try {
          msg.respond(body, problem ? { headers: toNatsHeaders({ [HEADER.problem]: '1' }) } : undefined);
        } catch (error) {
          // The connection closed under us: the caller times out and may retry.
          logger.warn({ err: error, subject: spec.subject }, 'reply could not be sent');
        }
      },
      { kind: 'server', parent: extractTraceContext(headers) },
    );
  };
  const subscription = nc.subscribe(spec.subject, {
    queue: spec.handledBy,
    callback: (error, msg) => {
      if (error) {
        logger.error({ err: error, subject: spec.subject }, 'request subscription failed');
        return;
      }
      void inFlight.track(answer(msg));
    },
  });
  return {
    unsubscribe: async () => {
      if (!subscription.isClosed() && !nc.isClosed()) await subscription.drain();
      await inFlight.settled();
    },
  };
}

const decodeRequest = <Req>(data: Uint8Array): Req => {
  try {
    return decodeJson<Req>(data);
  } catch {
    throw new ProblemError(400, 'The request body is not valid JSON.');
  }
};
