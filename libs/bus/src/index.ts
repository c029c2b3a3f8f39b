export * from './bus.js';
export { JsonText } from './json-text.js';
export { HEADER, messageContext, outgoingHeaders } from './message-headers.js';
export { DEFAULT_ACK_WAIT_MS, DEFAULT_REQUEST_TIMEOUT_MS, DEFAULT_RETRY_DELAY_MS } from './bus-defaults.js';
export { subjectMatcher, subjectMatches } from './subject-pattern.js';
export { NatsBus, type NatsBusOptions } from './adapters/nats/nats-bus.js';
export type { NatsSecurity } from './adapters/nats/nats-connect-options.js';
export {
  NATS_SERVICE_USERS,
  NATS_SUBSCRIBER_USER,
  natsAuthorization,
  natsInboxPrefix,
  natsPasswordVariable,
  renderNatsAuthorization,
  subjectSpecsOf,
  type NatsServiceUser,
  type NatsUser,
  type NatsUserPermissions,
} from './adapters/nats/nats-authorization.js';
export { InMemoryBus } from './adapters/in-memory/in-memory-bus.js';
export { BUS } from './adapters/nestjs/bus-token.js';
export { BusModule } from './adapters/nestjs/bus-module.js';
export { BusExceptionFilter } from './adapters/nestjs/bus-exception-filter.js';
export { BusTransport, type BusTransportOptions } from './adapters/nestjs/bus-transport.js';
export { connectBusMicroservice } from './adapters/nestjs/connect-bus-microservice.js';
export { createBusMicroservice } from './adapters/nestjs/create-bus-microservice.js';
