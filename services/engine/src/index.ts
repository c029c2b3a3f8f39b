export { EngineModule } from './engine.module.js';
export { EngineRuntime, type EngineDeps, type EngineOptions } from './engine-runtime.js';
export { startEngineService, type RunningEngine } from './start-engine-service.js';
export { executionsProjection } from './projections/executions-projection.js';
export { engineMigrations, migrateEngineSchema } from './adapters/postgres/engine-schema.js';
