import type { PostgresCursor, PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely';
import pg from 'pg';
import { QueryLettingGo } from './query-letting-go.js';

/** A kysely query (text and parameters) answered as pg's promise API would, letting go of it after. */
export class KyselyQuery extends QueryLettingGo<pg.QueryResult> {
  constructor(text: string, values: readonly unknown[]) {
    super(text, values);
  }

  answer(client: pg.ClientBase): Promise<pg.QueryResult> {
    return this.sendOn(client);
  }

  protected resultOf(results: unknown): pg.QueryResult {
    return results as pg.QueryResult;
  }
}

/**
 * `pool` for kysely's PostgresDialect, whose queries (text and parameters) go through
 * `QueryLettingGo`: pg's promise API answers through a closure over the query, whose text,
 * parameters and rows were promoted (the outbox relay's reads of every event, for one). A cursor
 * (a streamed query) goes to pg as it is. Each pg client keeps one wrapper: kysely keys its
 * connections by the client object it gets.
 */
export function poolLettingGo(pool: pg.Pool): PostgresPool {
  const wrappers = new WeakMap<pg.PoolClient, PostgresPoolClient>();
  // Clients a query of which pg's read timeout (`query_timeout`) gave up on: the statement may
  // still run on the server (a lock wait that later succeeds leaves the session in a transaction
  // holding the lock, and the ROLLBACK queued behind it times out unsent), so the connection is
  // closed when released, and the server rolls back whatever it still had open.
  const unsure = new WeakSet<pg.PoolClient>();
  const wrap = (client: pg.PoolClient): PostgresPoolClient => {
    function query<R>(sql: string, parameters: readonly unknown[]): Promise<PostgresQueryResult<R>>;
    function query<R>(cursor: PostgresCursor<R>): PostgresCursor<R>;
    function query<R>(
      sqlOrCursor: string | PostgresCursor<R>,
      parameters?: readonly unknown[],
    ): Promise<PostgresQueryResult<R>> | PostgresCursor<R> {
      if (typeof sqlOrCursor !== 'string') return client.query(sqlOrCursor as unknown as pg.Submittable) as never;
      return new KyselyQuery(sqlOrCursor, parameters ?? []).answer(client).catch((error: unknown) => {
        if (isReadTimeout(error)) unsure.add(client);
        throw error;
      }) as Promise<never>;
    }
    return {
      // Read by kysely to cancel a query; undocumented in pg, so read through as it changes.
      get processID() {
        return (client as unknown as { processID?: number }).processID;
      },
      query,
      release: (destroy) => client.release(destroy === true || unsure.has(client) ? true : destroy),
    };
  };
  return {
    Client: pg.Client,
    options: pool.options,
    async connect() {
      const client = await pool.connect();
      let wrapper = wrappers.get(client);
      if (!wrapper) wrappers.set(client, (wrapper = wrap(client)));
      return wrapper;
    },
    end: () => pool.end(),
  };
}

/** pg's own read timeout (`query_timeout`): not an answer from the server, so the session's state is unknown. */
const isReadTimeout = (error: unknown): boolean => error instanceof Error && error.message === 'Query read timeout';
