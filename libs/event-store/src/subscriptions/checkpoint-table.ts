import { sql } from 'kysely';
import type { Db } from '../event-store.js';

export type CheckpointTable = 'subscription_checkpoints' | 'projection_checkpoints';

export async function loadCheckpoint(db: Db, table: CheckpointTable, name: string): Promise<number> {
  const row = await db.selectFrom(table).select('position').where('name', '=', name).executeTakeFirst();
  return Number(row?.position ?? 0);
}

export async function saveCheckpoint(db: Db, table: CheckpointTable, name: string, position: number): Promise<void> {
  await db
    .insertInto(table)
    .values({ name, position })
    .onConflict((oc) => oc.column('name').doUpdateSet({ position, updated_at: sql`now()` }))
    .execute();
}
