import pg from 'pg';

/** One statement of a `TransactionAtOnce`: its values already converted by pg's `prepareValue`. */
export interface StatementToSend {
  text: string;
  values: readonly (string | Buffer | null)[];
  /** A prepared statement's name (parsed once per connection); undefined parses the text each time. */
  name?: string;
}

/** The part of pg's connection this writes to (pg-protocol's messages, and pg's record of prepared names). */
interface ProtocolConnection {
  stream: { cork?(): void; uncork?(): void };
  parsedStatements: Record<string, string | undefined>;
  parse(message: { text: string; name: string; types: number[] }): void;
  bind(message: {
    portal: string;
    statement: string;
    values: readonly (string | Buffer | null)[];
    binary: boolean;
  }): void;
  describe(message: { type: 'P'; name: string }): void;
  execute(message: { portal: string; rows: number }): void;
  sync(): void;
}

/**
 * A transaction as one extended-protocol exchange: each statement's Parse (a prepared one only the
 * first time on a connection), Bind, Describe and Execute, then a single Sync, written at once.
 * With no BEGIN, PostgreSQL runs everything before the Sync as one transaction and commits it
 * there; after an error it skips the rest and rolls back. It answers once, after the commit, in
 * one write: BEGIN, each statement with its own Sync and COMMIT made it answer four times, each a
 * system call on both sides and a wake-up of this process (about a quarter of a distributed
 * engine's CPU at one request at a time went to writes to its sockets).
 *
 * A `pg.Query`, so that pg's client hands it every answer until the ReadyForQuery that follows
 * the Sync; the Query's own handlers gather one result per statement.
 */
export class TransactionAtOnce extends pg.Query {
  /** Whether it sent a Parse for a named statement: after a failure, which exist is unknown. */
  parsedNamed = false;

  private statements: readonly StatementToSend[];

  constructor(statements: readonly StatementToSend[]) {
    super({ text: statements[0]?.text ?? '' });
    this.statements = statements;
    // pg types `submit` as a property; the client calls it to write the query.
    this.submit = (connection) => this.send(connection as unknown as ProtocolConnection);
  }

  /** The promise `results` returned, until the exchange ends. */
  private settle: { resolve: (rows: unknown[][]) => void; reject: (error: unknown) => void } | undefined;

  /** The rows of each statement, once the exchange ends; rejects with the first error. */
  results(client: pg.PoolClient): Promise<unknown[][]> {
    return new Promise((resolve, reject) => {
      this.settle = { resolve, reject };
      (this as unknown as { callback: typeof answered }).callback = answered;
      client.query(this);
    });
  }

  /**
   * The exchange's end, as pg reports it. Something in pg's handling of an answer (not found; a
   * plain callback does not show it) keeps the callback it called reachable for young-generation
   * collections until the next full one. A closure here kept this object and, through the
   * promise's resolve, the rows; everything they held was promoted to the old generation on every
   * commit (the texts, the Bind values, the parsed rows: about 13 KiB per synchronous run at one
   * request at a time) only to die there. So the callback is one shared function, and what was
   * sent, pg's results and the promise are dropped here.
   */
  handleAnswer(error: Error | null, results?: unknown): void {
    const settle = this.settle;
    const sent = this.statements.length;
    this.settle = undefined;
    this.statements = [];
    const query = this as unknown as { text: string; values?: unknown; _result?: unknown; _results?: unknown };
    query.text = '';
    query.values = undefined;
    query._result = undefined;
    query._results = undefined;
    if (!settle) return;
    if (error) return settle.reject(error);
    const each = (Array.isArray(results) ? results : [results]) as pg.QueryResult[];
    if (each.length !== sent)
      return settle.reject(new Error(`the transaction answered ${each.length} results for ${sent} statements`));
    settle.resolve(each.map((result) => result.rows as unknown[]));
  }

  private send(wire: ProtocolConnection): void {
    // Corked, the whole exchange leaves in one system call.
    wire.stream.cork?.();
    try {
      for (const { text, values, name = '' } of this.statements) {
        if (name === '' || wire.parsedStatements[name] === undefined) {
          wire.parse({ text, name, types: [] });
          if (name !== '') {
            wire.parsedStatements[name] = text;
            this.parsedNamed = true;
          }
        }
        wire.bind({ portal: '', statement: name, values, binary: false });
        wire.describe({ type: 'P', name: '' });
        wire.execute({ portal: '', rows: 0 });
      }
      wire.sync();
    } finally {
      wire.stream.uncork?.();
    }
  }
}

/** pg calls a query's `callback` as its method: one function for every transaction, holding nothing. */
function answered(this: TransactionAtOnce, error: Error | null, results?: unknown): void {
  this.handleAnswer(error, results);
}
