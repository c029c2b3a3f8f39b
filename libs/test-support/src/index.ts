export { freePort } from './free-port.js';
export { startNatsServer, type NatsServerOptions, type TestNatsServer } from './nats-server.js';
export { createTestDatabase, type TestDatabase } from './test-database.js';
export { namespacedBus } from './namespaced-bus.js';
