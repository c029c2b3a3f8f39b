export * from './execution-record.js';
export * from './execution-request.js';
export * from './node-configs.js';
export * from './node-config-schemas.js';
export * from './node-config-validation.js';
export * from '../events/engine/index.js';
export * from './trigger-config-validation.js';
