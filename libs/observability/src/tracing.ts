import {
  context,
  INVALID_SPAN_CONTEXT,
  isSpanContextValid,
  propagation,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
} from '@opentelemetry/api';

import { isSdkStarted, withTraceRoot } from './trace-fallback.js';

const TRACER_NAME = 'weft';

export type SpanKindName = 'internal' | 'server' | 'client' | 'producer' | 'consumer';

export interface SpanOptions {
  kind?: SpanKindName;
  /** Continue this context (e.g. from extractTraceContext) instead of the active one. */
  parent?: Context;
  /**
   * With tracing off and no trace active, run `fn` outside any trace rather than in a new one.
   * For spans whose only use then would be a fresh random trace id that nothing reads (the
   * outbox relay's publish of each event on the in-memory bus: two ids, a context and its frame
   * per event, about 14 KiB of garbage per request in the embedded profile).
   */
  untracedWithoutTrace?: boolean;
}

/** What `fn` gets when no span is made: records nothing, carries no trace. */
const noSpan = trace.wrapSpanContext(INVALID_SPAN_CONTEXT);

const kinds: Record<SpanKindName, SpanKind> = {
  internal: SpanKind.INTERNAL,
  server: SpanKind.SERVER,
  client: SpanKind.CLIENT,
  producer: SpanKind.PRODUCER,
  consumer: SpanKind.CONSUMER,
};

/**
 * Runs `fn` inside a new active span that ends when `fn` settles; a throw marks the span as
 * failed and is rethrown. Without a started SDK the span is a no-op and `fn` still runs.
 */
export async function withSpan<T>(
  name: string,
  attributes: Attributes,
  fn: (span: Span) => Promise<T> | T,
  options: SpanOptions = {},
): Promise<T> {
  // Tracing off and already inside a trace: the span would be a non-recording copy of the active
  // one (same trace and span id), made and entered on every bus message for nothing.
  if (!options.parent && !isSdkStarted()) {
    const active = trace.getActiveSpan();
    if (active && isSpanContextValid(active.spanContext())) return fn(active);
    if (options.untracedWithoutTrace) return fn(noSpan);
  }
  const parent = withTraceRoot(options.parent ?? context.active());
  const tracer = trace.getTracer(TRACER_NAME);
  return tracer.startActiveSpan(name, { kind: kinds[options.kind ?? 'internal'], attributes }, parent, async (span) => {
    try {
      return await fn(span);
    } catch (error) {
      span.recordException(error instanceof Error ? error : String(error));
      span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
      throw error;
    } finally {
      span.end();
    }
  });
}

const activeSpanContext = () => {
  const spanContext = trace.getActiveSpan()?.spanContext();
  return spanContext && isSpanContextValid(spanContext) ? spanContext : undefined;
};

/**
 * Whether a handler called in this process, in its caller's async context (the in-memory bus),
 * already runs in the trace its message's headers carry: tracing off and a span active, from which
 * the sender wrote the headers (`injectTraceHeaders` overwrites any it was given). It need not
 * extract that context again and enter a new non-recording span with the same ids.
 */
export const runsInCallersTrace = (): boolean => !isSdkStarted() && activeSpanContext() !== undefined;

/** The active trace id, or undefined when no (recording or propagated) span is active. */
export const currentTraceId = (): string | undefined => activeSpanContext()?.traceId;

/** The active span id, or undefined when no span is active. */
export const currentSpanId = (): string | undefined => activeSpanContext()?.spanId;

/**
 * Writes the active context's W3C `traceparent`/`tracestate` into `headers` (and returns them).
 * Leaves `headers` untouched when tracing is off or no span is active.
 */
export function injectTraceHeaders(headers: Record<string, string> = {}, from: Context = context.active()) {
  propagation.inject(from, headers);
  return headers;
}

/**
 * The context a sender propagated in `headers`; pass it as `parent` to withSpan to continue its
 * trace. Without a `traceparent` it is `base`: the active context unless told otherwise (a
 * consumer whose delivery loop runs in whatever context started it passes `ROOT_CONTEXT`, so an
 * untraced message starts a trace of its own instead of joining that one).
 */
export function extractTraceContext(
  headers: Record<string, string | undefined>,
  base: Context = context.active(),
): Context {
  return propagation.extract(base, headers, {
    get: (carrier, key) => carrier[key] ?? carrier[key.toLowerCase()],
    keys: (carrier) => Object.keys(carrier),
  });
}

export { ROOT_CONTEXT } from '@opentelemetry/api';
export type { Attributes, Context, Span };
