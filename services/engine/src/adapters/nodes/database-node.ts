import type { DatabaseNodeConfig } from '@weft/contracts';
import { NodeFailure, type NodeExecutor } from '../../domain/nodes/node-executor.js';
import type { SqlConnections, UserDatabase } from './sql-connections.js';

/**
 * Table operations built with kysely from the config (never raw SQL): select, insert, update,
 * delete and upsert; `where` is column = value (null matches IS NULL). Rows come back on
 * PostgreSQL through RETURNING; MySQL, which has none, reports the affected row count.
 */
type Where = Record<string, unknown>;

// eslint-disable-next-line @typescript-eslint/no-explicit-any
const applyWhere = <Q extends { where: (...args: any[]) => Q }>(query: Q, where: Where | undefined): Q => {
  let filtered = query;
  for (const [column, value] of Object.entries(where ?? {})) {
    filtered = value === null ? filtered.where(column, 'is', null) : filtered.where(column, '=', value);
  }
  return filtered;
};

const columnValues = (values: Record<string, unknown> | undefined): Record<string, unknown> =>
  Object.fromEntries(
    Object.entries(values ?? {}).map(([column, value]) => [
      column,
      value !== null && typeof value === 'object' && !(value instanceof Date) ? JSON.stringify(value) : value,
    ]),
  );

export async function runTableOperation(
  database: UserDatabase,
  config: DatabaseNodeConfig,
): Promise<{ rows: unknown[]; rowCount: number }> {
  const { db, dialect } = database;
  const values = columnValues(config.values);
  const returning = dialect === 'postgres';
  switch (config.operation) {
    case 'select': {
      let query = applyWhere(db.selectFrom(config.table).selectAll(), config.where);
      if (config.limit) query = query.limit(config.limit);
      const rows = await query.execute();
      return { rows, rowCount: rows.length };
    }
    case 'insert': {
      const query = db.insertInto(config.table).values(values);
      if (returning) {
        const rows = await query.returningAll().execute();
        return { rows, rowCount: rows.length };
      }
      const result = await query.executeTakeFirst();
      return { rows: [], rowCount: Number(result.numInsertedOrUpdatedRows ?? 0) };
    }
    case 'update': {
      if (!config.where || Object.keys(config.where).length === 0) throw new NodeFailure('update needs a where clause');
      const query = applyWhere(db.updateTable(config.table).set(values), config.where);
      if (returning) {
        const rows = await query.returningAll().execute();
        return { rows, rowCount: rows.length };
      }
      const result = await query.executeTakeFirst();
      return { rows: [], rowCount: Number(result.numUpdatedRows) };
    }
    case 'delete': {
      if (!config.where || Object.keys(config.where).length === 0) throw new NodeFailure('delete needs a where clause');
      const query = applyWhere(db.deleteFrom(config.table), config.where);
      if (returning) {
        const rows = await query.returningAll().execute();
        return { rows, rowCount: rows.length };
      }
      const result = await query.executeTakeFirst();
      return { rows: [], rowCount: Number(result.numDeletedRows) };
    }
    case 'upsert': {
      const conflict = config.conflictColumns ?? [];
      if (conflict.length === 0) throw new NodeFailure('upsert needs conflictColumns');
      const updates = Object.fromEntries(Object.entries(values).filter(([column]) => !conflict.includes(column)));
      if (returning) {
        const rows = await db
          .insertInto(config.table)
          .values(values)
          .onConflict((oc) =>
            Object.keys(updates).length > 0
              ? oc.columns(conflict).doUpdateSet(updates)
              : oc.columns(conflict).doNothing(),
          )
          .returningAll()
          .execute();
        return { rows, rowCount: rows.length };
      }
      const result = await db
        .insertInto(config.table)
        .values(values)
        .onDuplicateKeyUpdate(Object.keys(updates).length > 0 ? updates : values)
        .executeTakeFirst();
      return { rows: [], rowCount: Number(result.numInsertedOrUpdatedRows ?? 0) };
    }
    default: {
      const unknown: never = config.operation;
      throw new NodeFailure(`unknown database operation ${String(unknown)}`);
    }
  }
}

export const databaseNodeExecutor = (connections: SqlConnections): NodeExecutor<DatabaseNodeConfig> => ({
  type: 'databaseNode',
  async execute(config, _input, context) {
    const database = await connections.open(await context.connection(config.connectionId));
    try {
      return { output: await runTableOperation(database, config) };
    } catch (error) {
      if (error instanceof NodeFailure) throw error;
      throw new NodeFailure(
        `${config.operation} on ${config.table} failed: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  },
});
