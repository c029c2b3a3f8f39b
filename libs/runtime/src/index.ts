export * from './infrastructure.js';
export * from './bus-event-publisher.js';
export * from './secret-key-file.js';
export * from './service-process.js';
export * from './embedded-postgres/embedded-postgres-error.js';
export * from './embedded-postgres/embedded-postgres-server.js';
