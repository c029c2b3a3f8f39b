import { PGlite } from '@electric-sql/pglite';
import { Kysely, PostgresDialect, sql } from 'kysely';
import { PGliteDialect } from 'kysely-pglite-dialect';
import pg from 'pg';
import type { Db } from '../../event-store.js';

export type DatabaseDialect = 'postgres' | 'pglite';

/** A kysely handle plus what the store needs to know about the engine underneath. */
export interface Database {
  readonly db: Db;
  readonly dialect: DatabaseDialect;
  /** The schema (search_path) every unqualified table name resolves to. */
  readonly schema: string;
  /**
   * Calls `onNotify` on every NOTIFY of `channel` from any process (real PostgreSQL only; PGlite
   * has one process, where in-process wake-ups suffice). Resolves to an unlisten function.
   */
  listen(channel: string, onNotify: () => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

export interface OpenDatabaseOptions {
  /** PostgreSQL URL; absent means PGlite. */
  url?: string;
  /** PGlite data directory, or 'memory://' for a throw-away in-memory database. */
  dataDir?: string;
  /** search_path schema (created when missing), so tests can isolate themselves. */
  schema?: string;
  /** PostgreSQL pool size; default 10. */
  poolSize?: number;
}

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

export async function openDatabase(options: OpenDatabaseOptions = {}): Promise<Database> {
  const schema = options.schema ?? 'public';
  if (!SCHEMA_NAME.test(schema)) throw new Error(`invalid schema name "${schema}"`);
  return options.url ? openPostgres(options.url, schema, options.poolSize ?? 10) : openPglite(options.dataDir, schema);
}

async function openPostgres(url: string, schema: string, poolSize: number): Promise<Database> {
  if (schema !== 'public') {
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    try {
      await admin.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
    } finally {
      await admin.end();
    }
  }
  // The search_path is a connection option, so every pooled connection lands in the schema.
  const pool = new pg.Pool({ connectionString: url, max: poolSize, options: `-c search_path=${schema}` });
  // A connection the server dropped (restart, pg_terminate_backend) fails the query that uses it;
  // without listeners, the pool's or a checked-out client's 'error' event would crash the process.
  pool.on('error', () => undefined);
  pool.on('connect', (client) => client.on('error', () => undefined));
  const db: Db = new Kysely({ dialect: new PostgresDialect({ pool }) });
  const listeners: pg.PoolClient[] = [];
  return {
    db,
    dialect: 'postgres',
    schema,
    async listen(channel, onNotify) {
      const client = await pool.connect();
      listeners.push(client);
      client.on('notification', (message) => {
        if (message.channel === channel) onNotify();
      });
      await client.query(`LISTEN "${channel}"`);
      return async () => {
        const index = listeners.indexOf(client);
        if (index === -1) return;
        listeners.splice(index, 1);
        await client.query(`UNLISTEN "${channel}"`).catch(() => undefined);
        client.release();
      };
    },
    async close() {
      for (const client of listeners.splice(0)) client.release(true);
      await db.destroy();
    },
  };
}

async function openPglite(dataDir: string | undefined, schema: string): Promise<Database> {
  const pglite = dataDir && dataDir !== 'memory://' ? new PGlite(dataDir) : new PGlite();
  await pglite.waitReady;
  // kysely-pglite-dialect hands its single connection to one caller at a time, so transactions
  // never interleave (kysely-pglite does not; TOOLCHAIN.md). A test guards it.
  const db: Db = new Kysely({ dialect: new PGliteDialect(pglite) });
  if (schema !== 'public') {
    await sql.raw(`CREATE SCHEMA IF NOT EXISTS "${schema}"`).execute(db);
    // PGlite is one session, so the setting holds for every later query.
    await sql.raw(`SET search_path TO "${schema}"`).execute(db);
  }
  return {
    db,
    dialect: 'pglite',
    schema,
    async listen() {
      return async () => undefined;
    },
    async close() {
      await db.destroy();
    },
  };
}
