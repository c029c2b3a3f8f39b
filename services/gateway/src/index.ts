export * from './gateway.js';
export { BOOTSTRAP_KEY_FILE } from './application/bootstrap-key.js';
export { bootstrapKeyNotice } from './application/bootstrap-notice.js';
export { gatewayProjections } from './projections/gateway-projections.js';
export { gatewayMigrations } from './projections/gateway-migrations.js';
