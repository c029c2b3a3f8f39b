import pg from 'pg';

/** pg's fields of a query that this reads (not in its types). */
interface PgQueryState {
  callback?: (error: Error | null, results?: unknown) => void;
  _canceledDueToError: Error | false;
  _results: unknown;
}

/**
 * A pg query settled through its own methods, not through a closure. pg keeps the callback it
 * called after a query reachable for V8's young-generation collections until the next full one
 * (where, is not found: a standalone loop shows it with pg and not without). pg's promise API, and
 * any closure over the query, so kept every query's text, parameters and rows alive long enough to
 * be promoted to the old generation on every commit and every read, only to die there. Here pg's
 * answer arrives in `handleReadyForQuery` / `handleError` (which pg calls as methods in every path,
 * its read timeout included), the callback is one shared function that does nothing, and
 * `letGo` drops what was sent once the query is answered. pg's own results are left in place:
 * after its read timeout the query stays active and the rest of the exchange still lands in them.
 */
export abstract class QueryLettingGo<T> extends pg.Query {
  private settle: { resolve: (value: T) => void; reject: (error: unknown) => void } | undefined;

  /** Sends the query on `client`; resolves with `resultOf(pg's results)` or rejects with the first error. */
  protected sendOn(client: pg.ClientBase): Promise<T> {
    return new Promise((resolve, reject) => {
      this.settle = { resolve, reject };
      this.state.callback = nothingToDo;
      void client.query(this);
    });
  }

  /** What the promise resolves with; throwing rejects it. */
  protected abstract resultOf(results: unknown): T;

  /** Drops what was sent: called once, when the query is answered. pg's results stay (see below). */
  protected letGo(): void {
    const query = this as unknown as { text: string; values?: unknown };
    query.text = '';
    query.values = undefined;
  }

  /** pg's ReadyForQuery for this query, as `pg.Query` handles it, settling the promise first. */
  handleReadyForQuery(connection: unknown): void {
    const state = this.state;
    if (state._canceledDueToError) return this.handleError(state._canceledDueToError, connection);
    this.settleWith(null, state._results);
    // pg's read timeout (`query_timeout`) wraps the callback to clear its timer.
    state.callback?.(null, state._results);
    this.emit('end', state._results);
  }

  /** pg's error for this query (from the server, a lost connection, its read timeout), as `pg.Query` handles it. */
  handleError(error: Error, _connection?: unknown): void {
    const state = this.state;
    if (state._canceledDueToError) {
      error = state._canceledDueToError;
      state._canceledDueToError = false;
    }
    this.settleWith(error);
    state.callback?.(error);
  }

  private get state(): PgQueryState {
    return this as unknown as PgQueryState;
  }

  private settleWith(error: Error | null, results?: unknown): void {
    const settle = this.settle;
    if (!settle) return;
    this.settle = undefined;
    let value: T;
    try {
      if (error) throw error;
      value = this.resultOf(results);
    } catch (failure) {
      this.letGo();
      return settle.reject(failure);
    }
    this.letGo();
    settle.resolve(value);
  }
}

/** Every query's callback: pg then neither emits 'error' nor holds a closure over the query. */
function nothingToDo(): void {}
