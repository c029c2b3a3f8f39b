import { createHash } from 'node:crypto';
import { connect, isIP } from 'node:net';
import type { DecryptedConnection } from '@weft/contracts';
import { Kysely, MysqlDialect, PostgresDialect } from 'kysely';
import { createPool } from 'mysql2';
import pg from 'pg';
import { NodeFailure } from '../../domain/nodes/node-executor.js';
import { OutboundBlockedError, type OutboundGuard } from '../http/outbound-guard.js';
import { sqlTargetOf, type SqlDialectName, type SqlTarget } from './sql-connection-target.js';

/**
 * Connection pools to users' databases (postgres and mysql connections), one kysely instance per
 * connection, so SQL and database nodes reuse sockets across executions. Every open goes through
 * the outbound guard, and the pool connects to the address the guard checked (TLS still verifies
 * the host name); a connection whose settings or address change gets a new pool.
 */
export type { SqlDialectName };

export interface UserDatabase {
  dialect: SqlDialectName;
  db: Kysely<any>; // eslint-disable-line @typescript-eslint/no-explicit-any
}

interface OpenPool {
  key: string;
  database: UserDatabase;
}

const POOL_SIZE = 5;

function postgresPool(target: SqlTarget, address: string): Kysely<unknown> {
  const connectSeconds = Number(target.settings.connect_timeout);
  const password = target.password ?? '';
  return new Kysely({
    dialect: new PostgresDialect({
      pool: new pg.Pool({
        host: address,
        port: target.port,
        // A password function: pg would otherwise fall back to the service's PGPASSWORD and ~/.pgpass.
        user: target.user,
        password: () => password,
        database: target.database,
        ssl:
          target.tls === 'off'
            ? false
            : {
                // SNI and certificate checks use the name the connection gave, not the pinned address.
                servername: isIP(target.host) ? undefined : target.host,
                rejectUnauthorized: target.tls === 'verify',
              },
        application_name: target.settings.application_name,
        options: target.settings.options,
        statement_timeout: target.settings.statement_timeout ? Number(target.settings.statement_timeout) : undefined,
        connectionTimeoutMillis: connectSeconds > 0 ? connectSeconds * 1000 : undefined,
        max: POOL_SIZE,
      }),
    }),
  });
}

function mysqlPool(target: SqlTarget, address: string): Kysely<unknown> {
  const connectTimeout = Number(target.settings.connectTimeout);
  return new Kysely({
    dialect: new MysqlDialect({
      pool: createPool({
        // `host` stays the name for TLS; the socket goes to the checked address.
        host: target.host,
        port: target.port,
        stream: () => connect(target.port, address),
        user: target.user,
        password: target.password ?? '',
        database: target.database,
        ssl:
          target.tls === 'off'
            ? undefined
            : { rejectUnauthorized: target.tls === 'verify', verifyIdentity: target.tls === 'verify' },
        charset: target.settings.charset,
        timezone: target.settings.timezone,
        connectTimeout: connectTimeout > 0 ? connectTimeout : undefined,
        // Never offer LOAD DATA LOCAL INFILE: the server must not read the engine's files.
        flags: ['-LOCAL_FILES'],
        connectionLimit: POOL_SIZE,
      }),
    }),
  });
}

export class SqlConnections {
  private readonly pools = new Map<string, OpenPool>();

  constructor(private readonly guard: OutboundGuard) {}

  async open(connection: DecryptedConnection): Promise<UserDatabase> {
    const target = sqlTargetOf(connection);
    let address: string;
    try {
      address = (await this.guard.resolveTarget(target.host, target.port))[0]!.address;
    } catch (error) {
      if (error instanceof OutboundBlockedError) throw new NodeFailure(error.message);
      throw new NodeFailure(`cannot resolve database host ${target.host}: ${(error as Error).message}`);
    }
    const fingerprint = createHash('sha256').update(JSON.stringify(connection.data)).digest('hex');
    const key = `${fingerprint}@${address}`;
    const existing = this.pools.get(connection.id);
    if (existing?.key === key) return existing.database;
    const database: UserDatabase = {
      dialect: target.dialect,
      db: target.dialect === 'postgres' ? postgresPool(target, address) : mysqlPool(target, address),
    };
    this.pools.set(connection.id, { key, database });
    // The replaced pool finishes its running queries, then closes.
    if (existing) void existing.database.db.destroy().catch(() => undefined);
    return database;
  }

  async close(): Promise<void> {
    const all = [...this.pools.values()];
    this.pools.clear();
    await Promise.all(all.map((entry) => entry.database.db.destroy()));
  }
}
