export { TestingModule } from './testing.module.js';
export { TestingRuntime, type TestingDeps, type TestingOptions } from './testing-runtime.js';
export { startTestingService, type RunningTesting } from './start-testing-service.js';
export { testingMigrations, TESTING_MIGRATIONS_TABLE } from './projections/testing-migrations.js';
export { testingProjections } from './projections/testing-projections.js';
