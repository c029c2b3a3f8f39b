export * from './fake-identity.js';
export * from './gmail-server.js';
export * from './graph-server.js';
export * from './http-server.js';
export * from './mailbox-fixtures.js';
