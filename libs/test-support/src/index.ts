export { freePort } from './free-port.js';
export { startNatsServer, type NatsServerOptions, type TestNatsServer } from './nats-server.js';
export {
  startAuthorizedNatsServer,
  type AuthorizedNatsOptions,
  type AuthorizedNatsServer,
} from './authorized-nats-server.js';
export { createTestDatabase, type TestDatabase } from './test-database.js';
export { namespacedBus } from './namespaced-bus.js';
export {
  startWeftProcesses,
  WEFT_EMBEDDED_NODE_FLAGS,
  WEFT_SERVICE_NODE_FLAGS,
  nodeFlagsOf,
  weftServes,
  WEFT_MAINS,
  WEFT_SERVICE_NATS_USERS,
  type DistributedService,
  type WeftProcesses,
  type WeftProcessesOptions,
  type WeftService,
} from './weft-processes.js';
