export * from './telemetry.js';
export * from './tracing.js';
export * from './logger.js';
export { installTraceFallback } from './trace-fallback.js';
