import type { PostgresCursor, PostgresPool, PostgresPoolClient, PostgresQueryResult } from 'kysely';
import pg from 'pg';

/**
 * pg keeps the callback it called after a query reachable for V8's young-generation collections
 * until the next full one (not found where; a callback that holds nothing shows it harmlessly).
 * pg's own promise API answers through a closure over the query, and so kept every query's text,
 * parameters and rows alive long enough to be promoted to the old generation, only to die there:
 * the outbox relay's reads of every event, for one. Here the callback is one shared function and
 * the query drops its text, parameters, results and promise once answered (as `TransactionAtOnce`).
 */
export class QueryLettingGo extends pg.Query {
  private settle: { resolve: (result: pg.QueryResult) => void; reject: (error: unknown) => void } | undefined;

  constructor(text: string, values: readonly unknown[]) {
    super(text, values);
  }

  answer(client: pg.PoolClient): Promise<pg.QueryResult> {
    return new Promise((resolve, reject) => {
      this.settle = { resolve, reject };
      (this as unknown as { callback: typeof answered }).callback = answered;
      void client.query(this);
    });
  }

  handleAnswer(error: Error | null, result?: pg.QueryResult): void {
    const settle = this.settle;
    this.settle = undefined;
    const query = this as unknown as { text: string; values?: unknown; _result?: unknown; _results?: unknown };
    query.text = '';
    query.values = undefined;
    query._result = undefined;
    query._results = undefined;
    if (!settle) return;
    if (error) settle.reject(error);
    else settle.resolve(result as pg.QueryResult);
  }
}

/** pg calls a query's `callback` as its method: one function for every query, holding nothing. */
function answered(this: QueryLettingGo, error: Error | null, result?: pg.QueryResult): void {
  this.handleAnswer(error, result);
}

/**
 * `pool` for kysely's PostgresDialect, whose queries (text and parameters) go through
 * `QueryLettingGo`; a cursor (a streamed query) goes to pg as it is. Each pg client keeps one
 * wrapper: kysely keys its connections by the client object it gets.
 */
export function poolLettingGo(pool: pg.Pool): PostgresPool {
  const wrappers = new WeakMap<pg.PoolClient, PostgresPoolClient>();
  const wrap = (client: pg.PoolClient): PostgresPoolClient => {
    function query<R>(sql: string, parameters: readonly unknown[]): Promise<PostgresQueryResult<R>>;
    function query<R>(cursor: PostgresCursor<R>): PostgresCursor<R>;
    function query<R>(
      sqlOrCursor: string | PostgresCursor<R>,
      parameters?: readonly unknown[],
    ): Promise<PostgresQueryResult<R>> | PostgresCursor<R> {
      if (typeof sqlOrCursor !== 'string') return client.query(sqlOrCursor as unknown as pg.Submittable) as never;
      return new QueryLettingGo(sqlOrCursor, parameters ?? []).answer(client) as Promise<never>;
    }
    return {
      // Read by kysely to cancel a query; undocumented in pg, so read through as it changes.
      get processID() {
        return (client as unknown as { processID?: number }).processID;
      },
      query,
      release: (destroy) => client.release(destroy),
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
