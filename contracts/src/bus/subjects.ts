/**
 * The typed map of every request/reply subject and work queue, grouped by the service that
 * handles it. Each group lives in its own file; this one gathers them.
 */
export * from './gateway-subjects.js';
export * from './catalog-internal-subjects.js';
export * from './engine-subjects.js';
export * from './catalog-subjects.js';
export * from './trigger-subjects.js';
export * from './testing-subjects.js';
