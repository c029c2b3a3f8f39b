export * from './execution-events.js';
export * from './execution-event-schemas.js';
export * from './graph-snapshot-events.js';
