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

/**
 * `saveCheckpoint` that never moves it back: a relay that lost its lead without knowing yet (its
 * lock's heartbeat is a second) may still save a position behind the new leader's.
 */
export async function advanceCheckpoint(db: Db, table: CheckpointTable, name: string, position: number): Promise<void> {
  await db
    .insertInto(table)
    .values({ name, position })
    .onConflict((oc) =>
      oc.column('name').doUpdateSet({
        position: sql<number>`greatest(${sql.ref(`${table}.position`)}, excluded.position)`,
        updated_at: sql`now()`,
      }),
    )
    .execute();
}
