import pg from 'pg';
import { QueryLettingGo } from './query-letting-go.js';

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
export class TransactionAtOnce extends QueryLettingGo<unknown[][]> {
  /** Whether it sent a Parse for a named statement: after a failure, which exist is unknown. */
  parsedNamed = false;

  private statements: readonly StatementToSend[];
  private readonly sent: number;

  constructor(statements: readonly StatementToSend[]) {
    super({ text: statements[0]?.text ?? '' });
    this.statements = statements;
    this.sent = statements.length;
    // pg types `submit` as a property; the client calls it as a method to write the query. One
    // shared function, not a closure over this transaction (see QueryLettingGo).
    this.submit = submitTransaction;
  }

  /** The rows of each statement, once the exchange ends; rejects with the first error. */
  results(client: pg.ClientBase): Promise<unknown[][]> {
    return this.sendOn(client);
  }

  protected resultOf(results: unknown): unknown[][] {
    const each = (Array.isArray(results) ? results : [results]) as pg.QueryResult[];
    if (each.length !== this.sent)
      throw new Error(`the transaction answered ${each.length} results for ${this.sent} statements`);
    return each.map((result) => result.rows as unknown[]);
  }

  protected override letGo(): void {
    super.letGo();
    this.statements = [];
  }

  /** Writes the whole exchange: what pg's `submit` does for this query (see `submitTransaction`). */
  send(wire: ProtocolConnection): void {
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

function submitTransaction(this: TransactionAtOnce, connection: unknown): void {
  this.send(connection as ProtocolConnection);
}
