import type { Db } from '@weft/event-store';
import { sql } from 'kysely';

/** Every engine table, each row as its columns' text with SQL NULL spelled NULL (so a JSON null differs). */
export async function engineTables(db: Db): Promise<Record<string, string[]>> {
  const { rows: names } = await sql<{ table_name: string }>`
    SELECT table_name FROM information_schema.tables
    WHERE table_schema = current_schema() AND table_name LIKE 'engine\\_%' ORDER BY table_name`.execute(db);
  const snapshot: Record<string, string[]> = {};
  for (const { table_name: table } of names) {
    const { rows: columns } = await sql<{ column_name: string }>`
      SELECT column_name FROM information_schema.columns
      WHERE table_schema = current_schema() AND table_name = ${table} ORDER BY ordinal_position`.execute(db);
    const line = columns.map(({ column_name: c }) => `quote_nullable("${c}"::text)`).join(", '|', ");
    const { rows } = await sql<{ line: string }>`
      SELECT concat(${sql.raw(line)}) AS line FROM ${sql.raw(`"${table}"`)} ORDER BY 1`.execute(db);
    snapshot[table] = rows.map((row) => row.line);
  }
  return snapshot;
}
