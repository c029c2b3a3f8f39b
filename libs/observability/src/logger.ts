import { pino, type DestinationStream, type Logger, type LoggerOptions } from 'pino';
import { currentSpanId, currentTraceId } from './tracing.js';

export type { Logger };

/** Keys whose values never reach a log line, at any of the first three nesting levels. */
const SECRET_KEYS = ['authorization', '["x-api-key"]', 'password', 'token', 'secret', 'apiKey'];

/**
 * A statement's parameters carry user data (an execution's values): PGlite's errors hold them
 * (`params`), here or as the cause of an error that wraps them.
 */
const STATEMENT_PARAMS = ['err.params', 'err.cause.params', 'err.cause.cause.params'];

export const REDACTED_PATHS: string[] = [
  ...SECRET_KEYS.flatMap((key) => {
    const member = key.startsWith('[') ? key : `.${key}`;
    return [key, `*${member}`, `*.*${member}`];
  }),
  ...STATEMENT_PARAMS,
];

export interface CreateLoggerOptions {
  /** Defaults to WEFT_LOG_LEVEL, then `info`. */
  level?: string;
  /** Where lines go; stdout by default (tests pass a stream to read them back). */
  destination?: DestinationStream;
}

/** A pino JSON logger whose lines carry `trace_id`/`span_id` of the active span, with secrets redacted. */
export function createLogger(name: string, options: CreateLoggerOptions = {}): Logger {
  const config: LoggerOptions = {
    name,
    level: options.level ?? (process.env.WEFT_LOG_LEVEL?.trim() || 'info'),
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
    mixin: () => {
      const traceId = currentTraceId();
      return traceId ? { trace_id: traceId, span_id: currentSpanId() } : {};
    },
  };
  return options.destination ? pino(config, options.destination) : pino(config);
}
