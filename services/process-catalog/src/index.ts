export { ProcessCatalogModule, type CatalogDeps } from './catalog.module.js';
export { startProcessCatalogService, type RunningService } from './start-process-catalog-service.js';
export {
  catalogProjections,
  openCatalogApplication,
  type CatalogApplication,
} from './application/catalog-application.js';
export { CATALOG_MIGRATIONS_TABLE, catalogMigrations } from './projections/catalog-migrations.js';
export { lintProcess } from './domain/lint/lint-process.js';
export type { LintFinding, LintReport } from './domain/lint/lint-finding.js';
