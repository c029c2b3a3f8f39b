import { injectTraceHeaders } from '@weft/observability';
import type { Actor, MessageContext, SendOptions } from './bus.js';

/** Header names every transport uses, so NATS and the in-memory bus carry the same context. */
export const HEADER = {
  traceparent: 'traceparent',
  tracestate: 'tracestate',
  correlationId: 'weft-correlation-id',
  actor: 'weft-actor',
  /** Set to `1` on a reply whose body is a Problem instead of a result. */
  problem: 'weft-problem',
  /** Set to `1` on a request whose HTTP reply's body may come back as its JSON text (`replyBodyAsJsonText`). */
  replyBodyApart: 'weft-reply-body-apart',
  /** On such a reply: the byte where the body's JSON starts, after the rest of the reply's (http-reply-apart.ts). */
  httpBodyAt: 'weft-http-body-at',
} as const;

/**
 * The headers of an outgoing message: the caller's own, then correlation id, actor and the
 * W3C trace context of the active span (call it inside the sending span).
 */
export function outgoingHeaders(options: SendOptions = {}): Record<string, string> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.correlationId) headers[HEADER.correlationId] = options.correlationId;
  if (options.actor) headers[HEADER.actor] = JSON.stringify(options.actor);
  return injectTraceHeaders(headers);
}

const parseActor = (raw: string | undefined): Actor | undefined => {
  if (!raw) return undefined;
  try {
    return JSON.parse(raw) as Actor;
  } catch {
    // A malformed actor header is treated as no actor: handlers then refuse what needs one.
    return undefined;
  }
};

/** What a handler sees of the message it was given. */
export function messageContext(headers: Record<string, string>): MessageContext {
  return {
    headers,
    actor: parseActor(headers[HEADER.actor]),
    correlationId: headers[HEADER.correlationId],
    traceparent: headers[HEADER.traceparent],
  };
}
