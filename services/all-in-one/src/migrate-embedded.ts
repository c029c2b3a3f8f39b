import 'reflect-metadata';
import { loadConfig } from '@weft/config';
import { migratePgliteDataDir } from './pglite-migration.js';

/**
 * `pnpm migrate-embedded`: moves the PGlite database of WEFT_DATA_DIR (Weft before the embedded
 * PostgreSQL) into the embedded PostgreSQL. `make start` does the same on its own; this runs it
 * without starting Weft. Stop Weft first.
 */
async function main(): Promise<void> {
  const config = loadConfig();
  if (config.databaseUrl) throw new Error('WEFT_DATABASE_URL is set: the embedded store is not in use');
  await migratePgliteDataDir(config, (line) => process.stdout.write(`${line}\n`));
}

main().catch((error: unknown) => {
  process.stderr.write(`migration failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
