import pg from 'pg';

/**
 * Gives the benchmark's process a history of `total` stored executions before it is measured,
 * in seconds instead of the minutes that many runs through the API would take. The rows are
 * copies of executions the engine really ran through the API (the warm-up), so they have the
 * shape the engine writes, whatever columns the read model has today:
 * - `engine_executions`: one row per execution, new id, started/completed times moved back by
 *   20 s per copy (100,000 copies span about 23 days, all older than the real runs);
 * - `engine_node_states`: the template's node rows for each copy (five per execution);
 * - `engine_execution_counts`: `completed` raised by the number of copies, so the totals of
 *   history pages count them.
 * Then vacuumed, analyzed and checkpointed, as stats-history-seed.ts does its history.
 * Not copied: the statistics tables (durations, failed nodes, errors), which keep the real runs
 * only, and the events. Inserting a million events under a running Weft would make the outbox
 * relay publish them and every catch-up subscriber read them during the measurement, which a
 * real history did long before; so the event log holds only the real runs, and an append
 * measures against a smaller `events` table than 100,000 real executions would leave.
 */
const COPY_BATCH = 20_000;
const SECONDS_APART = 20;

const quote = (name: string): string => `"${name.replace(/"/g, '""')}"`;

async function columnsOf(client: pg.Client, table: string): Promise<{ name: string; type: string }[]> {
  const { rows } = await client.query<{ name: string; type: string }>(
    `SELECT column_name AS name, data_type AS type FROM information_schema.columns
      WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position`,
    [table],
  );
  return rows;
}

/** The select list copying `table` rows of alias `t`: `idColumn` from s.new_id, timestamps moved back. */
function copiedColumns(columns: { name: string; type: string }[], idColumn: string): string {
  return columns
    .map(({ name, type }) => {
      if (name === idColumn) return 's.new_id';
      if (type.startsWith('timestamp')) return `t.${quote(name)} - make_interval(secs => s.n * ${SECONDS_APART})`;
      return `t.${quote(name)}`;
    })
    .join(', ');
}

/** Adds copies until the process has `total` executions; answers how many were added. */
export async function seedHistory(databaseUrl: string, processId: string, total: number): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const existing = Number(
      (await client.query('SELECT count(*) AS n FROM engine_executions WHERE process_id = $1', [processId])).rows[0].n,
    );
    const wanted = Math.max(0, total - existing);
    if (wanted === 0) return 0;
    await client.query(
      `CREATE TEMP TABLE bench_templates AS
         SELECT id, row_number() OVER (ORDER BY started_at, id) - 1 AS k FROM engine_executions
          WHERE process_id = $1 AND status = 'completed'`,
      [processId],
    );
    const templates = Number((await client.query('SELECT count(*) AS n FROM bench_templates')).rows[0].n);
    if (templates === 0) throw new Error('no completed execution to copy: did the warm-up run?');
    const executionColumns = await columnsOf(client, 'engine_executions');
    const nodeColumns = await columnsOf(client, 'engine_node_states');
    for (let from = 1; from <= wanted; from += COPY_BATCH) {
      const to = Math.min(wanted, from + COPY_BATCH - 1);
      await client.query('BEGIN');
      await client.query(
        `CREATE TEMP TABLE bench_copies ON COMMIT DROP AS
           SELECT n, gen_random_uuid() AS new_id, b.id AS template_id
             FROM generate_series($1::int, $2::int) AS n JOIN bench_templates b ON b.k = n % $3`,
        [from, to, templates],
      );
      await client.query(
        `INSERT INTO engine_executions (${executionColumns.map((c) => quote(c.name)).join(', ')})
         SELECT ${copiedColumns(executionColumns, 'id')}
           FROM bench_copies s JOIN engine_executions t ON t.id = s.template_id`,
      );
      if (nodeColumns.length > 0)
        await client.query(
          `INSERT INTO engine_node_states (${nodeColumns.map((c) => quote(c.name)).join(', ')})
           SELECT ${copiedColumns(nodeColumns, 'execution_id')}
             FROM bench_copies s JOIN engine_node_states t ON t.execution_id = s.template_id`,
        );
      await client.query(
        `UPDATE engine_execution_counts SET count = count + $2 WHERE process_id = $1 AND status = 'completed'`,
        [processId, to - from + 1],
      );
      await client.query('COMMIT');
    }
    // Vacuumed and analyzed now, as a history that grew over time would be: otherwise autovacuum
    // works through the copies (insert-triggered vacuum) during the first level that follows.
    await client.query(`VACUUM (ANALYZE) engine_executions${nodeColumns.length > 0 ? ', engine_node_states' : ''}`);
    // And the copies' pages written out: the checkpoint their WAL would start comes now, not amid the timed requests.
    await client.query('CHECKPOINT');
    return wanted;
  } finally {
    await client.end();
  }
}
