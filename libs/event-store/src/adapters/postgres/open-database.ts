import { PGlite } from '@electric-sql/pglite';
import { Kysely, PostgresDialect, sql } from 'kysely';
import { PGliteDialect } from 'kysely-pglite-dialect';
import pg from 'pg';
import { createRequire } from 'node:module';
import type { Db } from '../../event-store.js';
import { freshInMemoryPglite } from './pglite-template.js';
import { TransactionAtOnce } from './transaction-at-once.js';
import { poolLettingGo } from './pool-letting-go.js';

export type DatabaseDialect = 'postgres' | 'pglite';

/** A kysely handle plus what the store needs to know about the engine underneath. */
export interface Database {
  readonly db: Db;
  readonly dialect: DatabaseDialect;
  /** The schema (search_path) every unqualified table name resolves to. */
  readonly schema: string;
  /**
   * Calls `onNotify` with the payload of every NOTIFY of `channel` from any process (real
   * PostgreSQL only; PGlite has one process, where in-process wake-ups suffice). Resolves to an
   * unlisten function. `onLost` is called once if the listening connection fails or ends before
   * that (a restarted server, a terminated backend): nothing is heard any more.
   */
  listen(channel: string, onNotify: (payload: string) => void, onLost?: () => void): Promise<() => Promise<void>>;
  /** One pool connection held for a caller's session state (a leader lock); PostgreSQL only. */
  pinSession?(): Promise<PinnedSession>;
  /**
   * Runs `statements` in one transaction on one connection, all sent at once (the statements
   * with their parameters and one Sync: `TransactionAtOnce`). No turn of this process's
   * event loop comes between them, so a lock the first takes is held for as long as the database
   * works, not while a busy process gets round to sending the next. A failure rolls the
   * transaction back and is thrown. Resolves to each statement's rows. PostgreSQL only.
   */
  readonly queuedTransaction?: (statements: readonly QueuedStatement[]) => Promise<unknown[][]>;
  /** How long a statement on a pinned session may take before the session is given up. */
  readonly sessionTimeoutMs?: number;
  /**
   * True when no other process can write to this database (Weft's embedded PostgreSQL, reached
   * only through its private socket): every append then goes through this process's store.
   */
  readonly onlyWriter?: boolean;
  close(): Promise<void>;
}

/** One statement of a `queuedTransaction`: SQL text with `$n` placeholders and their values. */
export interface QueuedStatement {
  sql: string;
  parameters: readonly unknown[];
  /**
   * The same text comes back again and again (its values are all parameters): each connection
   * of `queuedTransaction` keeps it as a prepared statement, parsed once (and planned once, if PostgreSQL
   * finds its generic plan no worse) instead of parsing and planning kilobytes of SQL per commit.
   */
  prepared?: boolean;
}

/**
 * At most this many distinct texts become prepared statements (per process, so per connection):
 * a caller that marks texts that vary with its data as `prepared` cannot grow them without bound.
 */
const MAX_PREPARED_STATEMENTS = 100;

/**
 * Errors after which a connection's prepared statements cannot be used again: a column type of a
 * table they return from changed (0A000 "cached plan must not change result type"; PostgreSQL
 * replans other changes itself), or the server no longer has one (26000). pg would send the
 * name again and again on that connection: it is closed instead, and the transaction (which
 * committed nothing) runs again on another, which prepares anew.
 */
const STALE_PREPARED_STATEMENT = new Set(['0A000', '26000']);

/** Connections of the pool of `queuedTransaction`. */
const AT_ONCE_CONNECTIONS = 2;

/** A pooled connection kept out of the pool, for session-level state such as advisory locks. */
export interface PinnedSession {
  query<R>(text: string, values?: unknown[]): Promise<R[]>;
  /** Back to the pool; `broken` closes it instead (a hung statement, a lost lock). */
  release(broken?: boolean): void;
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
  /** PostgreSQL limits (DEFAULT_DATABASE_TIMEOUTS when absent); 0 turns a server-side timeout off. */
  timeouts?: Partial<DatabaseTimeouts>;
}

/**
 * Without these, a statement waiting on another session's lock, a transaction left open, or a
 * connection whose peer vanished without a FIN holds a pool connection (and the leader lock) forever.
 */
export interface DatabaseTimeouts {
  /** Server-side statement_timeout of every pooled connection. */
  statementMs: number;
  /** Server-side lock_timeout: a statement waiting this long for a lock fails (SQLSTATE 55P03). */
  lockMs: number;
  /** Server-side idle_in_transaction_session_timeout. */
  idleInTransactionMs: number;
  /** Idle time before TCP keepalive probes start on a pooled connection. */
  keepAliveMs: number;
  /** Longest wait for a pinned session's statement (the leader-lock heartbeat); a hang closes the session. */
  sessionMs: number;
}

export const DEFAULT_DATABASE_TIMEOUTS: DatabaseTimeouts = {
  statementMs: 60_000,
  lockMs: 15_000,
  idleInTransactionMs: 60_000,
  keepAliveMs: 10_000,
  sessionMs: 5_000,
};

/** pg's own conversion of a parameter to what it sends (text, a Buffer or null). */
const { prepareValue } = createRequire(import.meta.url)('pg/lib/utils') as {
  prepareValue: (value: unknown) => string | Buffer | null;
};

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

export async function openDatabase(options: OpenDatabaseOptions = {}): Promise<Database> {
  const schema = options.schema ?? 'public';
  if (!SCHEMA_NAME.test(schema)) throw new Error(`invalid schema name "${schema}"`);
  const timeouts = { ...DEFAULT_DATABASE_TIMEOUTS, ...options.timeouts };
  return options.url
    ? openPostgres(options.url, schema, options.poolSize ?? 10, timeouts)
    : openPglite(options.dataDir, schema);
}

async function openPostgres(
  url: string,
  schema: string,
  poolSize: number,
  timeouts: DatabaseTimeouts,
): Promise<Database> {
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
  // The timeouts are startup parameters too (0 = off), so no statement runs without them.
  const poolConfig: pg.PoolConfig = {
    connectionString: url,
    max: poolSize,
    options: `-c search_path=${schema}`,
    statement_timeout: timeouts.statementMs,
    lock_timeout: timeouts.lockMs,
    idle_in_transaction_session_timeout: timeouts.idleInTransactionMs,
    keepAlive: true,
    keepAliveInitialDelayMillis: timeouts.keepAliveMs,
  };
  const pool = new pg.Pool(poolConfig);
  // The connections of `queuedTransaction`: a pool of their own, so that each keeps its prepared
  // statements and a kysely caller never waits behind a commit for one.
  const atOncePool = new pg.Pool({ ...poolConfig, max: AT_ONCE_CONNECTIONS });
  // A connection the server dropped (restart, pg_terminate_backend) fails the query that uses it;
  // without listeners, the pool's or a checked-out client's 'error' event would crash the process.
  for (const each of [pool, atOncePool]) {
    each.on('error', () => undefined);
    each.on('connect', (client) => client.on('error', () => undefined));
  }
  const db: Db = new Kysely({ dialect: new PostgresDialect({ pool: poolLettingGo(pool) }) });
  const listeners: pg.PoolClient[] = [];
  const preparedNames = new Map<string, string>();
  return {
    db,
    dialect: 'postgres',
    schema,
    async listen(channel, onNotify, onLost) {
      const client = await pool.connect();
      listeners.push(client);
      client.on('notification', (message) => {
        if (message.channel === channel) onNotify(message.payload ?? '');
      });
      const drop = (): boolean => {
        const index = listeners.indexOf(client);
        if (index === -1) return false;
        listeners.splice(index, 1);
        return true;
      };
      const lost = (): void => {
        if (!drop()) return;
        client.release(true);
        onLost?.();
      };
      client.once('error', lost);
      client.once('end', lost);
      try {
        await client.query(`LISTEN "${channel}"`);
      } catch (error) {
        // The connection goes back destroyed, not kept out of the pool for nothing.
        if (drop()) client.release(true);
        throw error;
      }
      return async () => {
        if (!drop()) return;
        client.off('error', lost);
        client.off('end', lost);
        await client.query(`UNLISTEN "${channel}"`).catch(() => undefined);
        client.release();
      };
    },
    sessionTimeoutMs: timeouts.sessionMs,
    async pinSession() {
      const client = await pool.connect();
      return pinnedSession(client, timeouts.sessionMs);
    },
    queuedTransaction: (statements) => queuedTransaction(atOncePool, statements, preparedNames),
    async close() {
      for (const client of listeners.splice(0)) client.release(true);
      await Promise.all([db.destroy(), atOncePool.end()]);
    },
  };
}

/**
 * The statements as one transaction, sent at once with a single Sync (`TransactionAtOnce`):
 * PostgreSQL runs them one after the other without waiting for this process, commits at the
 * Sync and answers once. After a failed statement it skips the rest and rolls back.
 */
async function queuedTransaction(
  pool: pg.Pool,
  statements: readonly QueuedStatement[],
  preparedNames: Map<string, string>,
  attempt = 1,
): Promise<unknown[][]> {
  // An empty text answers no result, which would leave the others' results unmatched, after the commit.
  if (statements.some((statement) => statement.sql.trim() === '')) throw new Error('a queued statement has no text');
  // Converted first: a value pg cannot convert (a circular object) fails before anything is sent.
  const toSend = statements.map((statement) => ({
    text: statement.sql,
    values: statement.parameters.map(prepareValue),
    name: statement.prepared ? preparedName(preparedNames, statement.sql) : undefined,
  }));
  const client = await pool.connect();
  const transaction = new TransactionAtOnce(toSend);
  let broken = false;
  let released = false;
  try {
    return await transaction.results(client);
  } catch (error) {
    const stale = error instanceof pg.DatabaseError && STALE_PREPARED_STATEMENT.has(error.code ?? '');
    // A statement it parsed may or may not exist now: the connection goes rather than guess.
    broken = stale || transaction.parsedNamed || !(error instanceof pg.DatabaseError);
    // Nothing was committed: again on another connection (each of the pool's may hold it stale).
    if (stale && attempt <= AT_ONCE_CONNECTIONS) {
      client.release(true);
      released = true;
      return await queuedTransaction(pool, statements, preparedNames, attempt + 1);
    }
    throw error;
  } finally {
    if (!released) client.release(broken);
  }
}

/** The name of a prepared statement's text, the same on every connection of the pool; past the limit, none. */
function preparedName(names: Map<string, string>, text: string): string | undefined {
  let name = names.get(text);
  if (name === undefined && names.size < MAX_PREPARED_STATEMENTS) names.set(text, (name = `weft_queued_${names.size}`));
  return name;
}

/** Statements race a timer: a hung connection (no answer, no FIN) fails the caller and is closed. */
function pinnedSession(client: pg.PoolClient, timeoutMs: number): PinnedSession {
  let released = false;
  const release = (broken = false): void => {
    if (released) return;
    released = true;
    // A polite end() would wait on a peer that no longer answers: drop the socket itself.
    if (broken) (client as unknown as { connection?: { stream?: { destroy(): void } } }).connection?.stream?.destroy();
    client.release(broken);
  };
  return {
    async query<R>(text: string, values?: unknown[]): Promise<R[]> {
      let timer: NodeJS.Timeout | undefined;
      const hung = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          release(true);
          reject(new Error(`database session gave no answer within ${timeoutMs} ms`));
        }, timeoutMs);
      });
      try {
        const result = await Promise.race([client.query(text, values), hung]);
        return result.rows as R[];
      } finally {
        clearTimeout(timer);
      }
    },
    release,
  };
}

async function openPglite(dataDir: string | undefined, schema: string): Promise<Database> {
  const pglite = dataDir && dataDir !== 'memory://' ? new PGlite(dataDir) : await freshInMemoryPglite();
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
