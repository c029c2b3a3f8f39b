import { errors, type Msg, type NatsConnection } from '@nats-io/transport-node';
import { ProblemError, type RequestSpec } from '@weft/contracts';
import { extractTraceContext, withSpan, type Logger } from '@weft/observability';
import type { MessageContext, SendOptions, Subscription } from '../../bus.js';
import { DEFAULT_REQUEST_TIMEOUT_MS } from '../../bus-defaults.js';
import { InFlight } from '../../in-flight.js';
import { decodeJson, encodeJson } from '../../json-payload.js';
import { HEADER, messageContext, outgoingHeaders } from '../../message-headers.js';
import { messageTooLarge } from '../../message-size.js';
import { problemFromError } from '../../problem-reply.js';
import { ChunkEndpoint, type ChunkLimits } from './nats-chunk-endpoint.js';
import { requestInChunks, wholeReply } from './nats-chunked-request.js';
import { chunkPartOf, payloadRoom } from './nats-chunks.js';
import { decodeReplyApart, encodeReplyApart } from './http-reply-apart.js';
import { fromNatsHeaders, toNatsHeaders } from './nats-headers.js';

const isNoResponders = (error: unknown): boolean =>
  error instanceof errors.NoRespondersError || (error instanceof errors.RequestError && error.isNoResponders());

/**
 * Sends a request and turns the reply (or its absence) into a result or a ProblemError. A request
 * or reply larger than the server's max_payload travels in chunks (nats-chunked-request.ts).
 */
export async function natsRequest<Req, Res>(
  nc: NatsConnection,
  spec: RequestSpec<Req, Res>,
  payload: Req,
  options: SendOptions,
  limits: ChunkLimits,
): Promise<Res> {
  return withSpan(
    `request ${spec.subject}`,
    { 'messaging.system': 'nats', 'messaging.destination.name': spec.subject },
    async () => {
      const timeout = options.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
      const deadline = Date.now() + timeout;
      const timeLeft = () => Math.max(1, deadline - Date.now());
      const data = encodeJson(payload);
      if (data.length > limits.maxMessageBytes) throw messageTooLarge('request', data.length, limits.maxMessageBytes);
      const sent = outgoingHeaders(options);
      if (options.replyBodyAsJsonText) sent[HEADER.replyBodyApart] = '1';
      const headers = toNatsHeaders(sent);
      let reply: Msg;
      let body: Uint8Array;
      try {
        reply =
          data.length <= payloadRoom(nc, headers)
            ? await nc.request(spec.subject, data, { timeout, headers })
            : await requestInChunks(nc, spec.subject, data, headers, timeLeft);
        body = await wholeReply(nc, reply, limits.maxMessageBytes, timeLeft);
      } catch (error) {
        if (isNoResponders(error)) throw new ProblemError(503, `No service answers ${spec.subject}.`);
        if (error instanceof errors.TimeoutError) {
          throw new ProblemError(504, `${spec.subject} did not answer within ${timeout} ms.`);
        }
        throw error;
      }
      if (reply.headers?.get(HEADER.problem) === '1') throw ProblemError.fromProblem(decodeJson(body));
      const bodyAt = reply.headers?.get(HEADER.httpBodyAt);
      return bodyAt ? decodeReplyApart<Res>(body, bodyAt, spec.subject) : decodeJson<Res>(body);
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
  limits: ChunkLimits,
): Subscription {
  const inFlight = new InFlight();
  const answer = async (data: Uint8Array, headers: Record<string, string>, msg: Msg): Promise<void> => {
    await withSpan(
      `serve ${spec.subject}`,
      { 'messaging.system': 'nats', 'messaging.destination.name': spec.subject },
      async () => {
        let body: Uint8Array;
        let problem = false;
        let bodyAt: number | undefined;
        try {
          const payload = decodeRequest<Req>(data);
          const result = await handler(payload, messageContext(headers));
          const apart = headers[HEADER.replyBodyApart] === '1' ? encodeReplyApart(result) : undefined;
          body = apart ? apart.payload : encodeJson(result);
          bodyAt = apart?.bodyAt;
        } catch (error) {
          problem = true;
          body = encodeJson(problemFromError(error, logger, spec.subject));
        }
        if (msg.reply) chunks.reply(msg, body, problem, bodyAt);
      },
      { kind: 'server', parent: extractTraceContext(headers) },
    );
  };
  const chunks = new ChunkEndpoint(nc, spec.subject, limits, logger, (data, headers, msg) => {
    void inFlight.track(answer(data, headers, msg));
  });
  const subscription = nc.subscribe(spec.subject, {
    queue: spec.handledBy,
    callback: (error, msg) => {
      if (error) {
        logger.error({ err: error, subject: spec.subject }, 'request subscription failed');
        return;
      }
      const part = chunkPartOf(msg.headers);
      if (part) chunks.begin(msg, part);
      else void inFlight.track(answer(msg.data, fromNatsHeaders(msg.headers), msg));
    },
  });
  return {
    unsubscribe: async () => {
      if (!subscription.isClosed() && !nc.isClosed()) await subscription.drain();
      await inFlight.settled();
      chunks.close();
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
