import { randomFillSync } from 'node:crypto';
import { context, isSpanContextValid, propagation, trace, TraceFlags, type Context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';

/**
 * With tracing off (no OTEL_* set) Weft still gives every request a trace id and carries it in
 * W3C headers across the bus, so logs and stored events of one request stay correlated. Spans
 * are then non-recording: nothing is exported.
 */
let sdkStarted = false;
let fallbackInstalled = false;

export const markSdkStarted = (started: boolean): void => {
  sdkStarted = started;
};

/** Whether an OpenTelemetry SDK records spans in this process. */
export const isSdkStarted = (): boolean => sdkStarted;

/** Async context and W3C propagation without an SDK; a started SDK installs its own. */
export function installTraceFallback(): void {
  if (fallbackInstalled || sdkStarted) return;
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  fallbackInstalled = true;
}

export function uninstallTraceFallback(): void {
  if (!fallbackInstalled) return;
  context.disable();
  propagation.disable();
  fallbackInstalled = false;
}

/**
 * Random bytes drawn 4 KiB at a time: a bus message handled outside a request starts a trace root,
 * and a randomBytes call for each id showed in the all-in-one's profile (3% at c=50).
 */
const randomPool = Buffer.alloc(4096);
let randomOffset = randomPool.length;
function randomHex(bytes: number): string {
  if (randomOffset + bytes > randomPool.length) {
    randomFillSync(randomPool);
    randomOffset = 0;
  }
  randomOffset += bytes;
  return randomPool.toString('hex', randomOffset - bytes, randomOffset);
}

/** A root context with a fresh trace id when tracing is off and `parent` carries no trace. */
export function withTraceRoot(parent: Context): Context {
  if (sdkStarted) return parent;
  const current = trace.getSpanContext(parent);
  if (current && isSpanContextValid(current)) return parent;
  return trace.setSpanContext(parent, {
    traceId: randomHex(16),
    spanId: randomHex(8),
    traceFlags: TraceFlags.NONE,
  });
}
