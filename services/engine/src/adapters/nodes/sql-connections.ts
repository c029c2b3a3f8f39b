import { createHash } from 'node:crypto';
import type { DecryptedConnection } from '@weft/contracts';
import { Kysely, MysqlDialect, PostgresDialect } from 'kysely';
import { createPool } from 'mysql2';
import pg from 'pg';
import { NodeFailure } from '../../domain/nodes/node-executor.js';

/**
 * Connection pools to users' databases (postgres and mysql connections), one kysely instance per
 * connection and credentials, so SQL and database nodes reuse sockets across executions.
 */
export type SqlDialectName = 'postgres' | 'mysql';

export interface UserDatabase {
  dialect: SqlDialectName;
  db: Kysely<any>; // eslint-disable-line @typescript-eslint/no-explicit-any
}

const text = (value: unknown): string | undefined =>
  value === undefined || value === null || value === ''
    ? undefined
    : typeof value === 'object'
      ? JSON.stringify(value)
      : (value as string | number | boolean).toString();

export class SqlConnections {
  private readonly pools = new Map<string, UserDatabase>();

  open(connection: DecryptedConnection): UserDatabase {
    if (connection.type !== 'postgres' && connection.type !== 'mysql') {
      throw new NodeFailure(`connection ${connection.id} is a ${connection.type} connection, not a database`);
    }
    const fingerprint = createHash('sha256').update(JSON.stringify(connection.data)).digest('hex');
    const key = `${connection.id}:${fingerprint}`;
    const existing = this.pools.get(key);
    if (existing) return existing;
    const data = connection.data;
    const url = text(data.url ?? data.connectionString);
    const port = data.port === undefined ? undefined : Number(data.port);
    const opened: UserDatabase =
      connection.type === 'postgres'
        ? {
            dialect: 'postgres',
            db: new Kysely({
              dialect: new PostgresDialect({
                pool: new pg.Pool(
                  url
                    ? { connectionString: url, max: 5 }
                    : {
                        host: text(data.host),
                        port,
                        user: text(data.user ?? data.username),
                        password: text(data.password),
                        database: text(data.database),
                        max: 5,
                      },
                ),
              }),
            }),
          }
        : {
            dialect: 'mysql',
            db: new Kysely({
              dialect: new MysqlDialect({
                pool: url
                  ? createPool({ uri: url, connectionLimit: 5 })
                  : createPool({
                      host: text(data.host),
                      port,
                      user: text(data.user ?? data.username),
                      password: text(data.password),
                      database: text(data.database),
                      connectionLimit: 5,
                    }),
              }),
            }),
          };
    this.pools.set(key, opened);
    return opened;
  }

  async close(): Promise<void> {
    const all = [...this.pools.values()];
    this.pools.clear();
    await Promise.all(all.map((entry) => entry.db.destroy()));
  }
}
