import type { SqlNodeConfig } from '@weft/contracts';
import { CompiledQuery } from 'kysely';
import { NodeFailure, type NodeExecutor } from '../../domain/nodes/node-executor.js';
import type { SqlConnections } from './sql-connections.js';

/**
 * Parameterised SQL: `query` (never templated) with `$1..$n` bound to `params` (templates
 * resolved to values). MySQL takes `?` placeholders, so `$n` is rewritten outside quotes and the
 * parameters reordered to match; values never enter the SQL text.
 */
export function toMysqlPlaceholders(query: string, params: readonly unknown[]): { sql: string; params: unknown[] } {
  const ordered: unknown[] = [];
  let sql = '';
  let quote: string | null = null;
  for (let i = 0; i < query.length; i++) {
    const char = query[i] as string;
    if (quote) {
      sql += char;
      if (char === quote) quote = null;
      continue;
    }
    if (char === "'" || char === '"' || char === '`') {
      quote = char;
      sql += char;
      continue;
    }
    const placeholder = char === '$' ? /^\$(\d+)/.exec(query.slice(i)) : null;
    if (placeholder) {
      const index = Number(placeholder[1]) - 1;
      if (index < 0 || index >= params.length)
        throw new NodeFailure(`query uses $${index + 1} but params has ${params.length}`);
      ordered.push(params[index]);
      sql += '?';
      i += placeholder[0].length - 1;
      continue;
    }
    sql += char;
  }
  return { sql, params: ordered };
}

const bindable = (value: unknown): unknown =>
  value !== null && typeof value === 'object' && !(value instanceof Date) ? JSON.stringify(value) : value;

export const sqlNodeExecutor = (connections: SqlConnections): NodeExecutor<SqlNodeConfig> => ({
  type: 'sqlNode',
  rawConfigKeys: ['query'],
  async execute(config, _input, context) {
    const database = await connections.open(await context.connection(config.connectionId));
    const params = (config.params ?? []).map(bindable);
    const compiled =
      database.dialect === 'mysql'
        ? (({ sql, params: ordered }) => CompiledQuery.raw(sql, ordered))(toMysqlPlaceholders(config.query, params))
        : CompiledQuery.raw(config.query, params);
    try {
      const result = await database.db.executeQuery(compiled);
      const rowCount = result.rows.length > 0 ? result.rows.length : Number(result.numAffectedRows ?? 0);
      return { output: { rows: result.rows, rowCount } };
    } catch (error) {
      throw new NodeFailure(`SQL failed: ${error instanceof Error ? error.message : String(error)}`);
    }
  },
});
