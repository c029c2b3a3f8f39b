export * from './problem.js';
export * from './catalog/process-record.js';
export * from './bus/message-spec.js';
export * from './bus/event-subjects.js';
export * from './bus/subjects.js';
export * from './http/http-route.js';
export * from './http/routes.js';
