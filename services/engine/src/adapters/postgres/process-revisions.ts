import type { Db } from '@weft/event-store';
import { PROCESS_STREAM_PREFIX, processStreamId } from '../../domain/graph/process-stream.js';

/**
 * The current revision of each process: the version of its catalog stream (`process-<id>`,
 * docs/catalog.md), 0 for one without events; one statement for all of them.
 */
export async function processRevisions(db: Db, processIds: readonly string[]): Promise<Map<string, number>> {
  const revisions = new Map<string, number>(processIds.map((id) => [id, 0]));
  if (processIds.length === 0) return revisions;
  const rows = await db
    .selectFrom('events')
    .select(['stream_id', (eb) => eb.fn.max('stream_version').as('version')])
    .where('stream_id', 'in', processIds.map(processStreamId))
    .groupBy('stream_id')
    .execute();
  for (const row of rows) revisions.set(String(row.stream_id).slice(PROCESS_STREAM_PREFIX.length), Number(row.version));
  return revisions;
}
