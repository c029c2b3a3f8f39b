import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import {
  migrate,
  rebuildProjection,
  rebuildReadModels,
  startProjection,
  type Db,
  type Projection,
  type StoredEvent,
  type Trx,
} from '../src/index.js';
import { DIALECTS, openTestStore, type TestStore } from './support/test-database.js';

/** A read model of process names and edit counts, the shape services build. */
const processNames = (table: string): Projection => ({
  name: table,
  eventTypes: ['ProcessCreated', 'ProcessRenamed'],
  async apply(db: Trx, event: StoredEvent) {
    const data = event.data as { name: string };
    switch (event.type) {
      case 'ProcessCreated':
        await db
          .insertInto(table)
          .values({ id: event.streamId, name: data.name, edits: 0, last_position: event.position })
          .execute();
        return;
      case 'ProcessRenamed':
        await db
          .updateTable(table)
          .set({ name: data.name, edits: sql`edits + 1`, last_position: event.position })
          .where('id', '=', event.streamId)
          .execute();
        return;
      default:
        throw new Error(`unexpected ${event.type}`);
    }
  },
  async reset(db: Trx) {
    await db.deleteFrom(table).execute();
  },
});

async function createReadModel(db: Db, table: string): Promise<void> {
  await migrate(
    db,
    [
      {
        name: `0001-${table}`,
        up: async (trx) => {
          await sql
            .raw(
              `CREATE TABLE ${table} (id text PRIMARY KEY, name text NOT NULL, edits int NOT NULL, last_position bigint NOT NULL)`,
            )
            .execute(trx);
        },
      },
    ],
    `${table}_migrations`,
  );
}

interface NameRow {
  id: string;
  name: string;
  edits: number;
  last_position: number;
}

const rowsOf = async (db: Db, table: string): Promise<NameRow[]> =>
  (await db.selectFrom(table).selectAll().orderBy('id').execute()).map((row) => ({
    id: String(row.id),
    name: String(row.name),
    edits: Number(row.edits),
    last_position: Number(row.last_position),
  }));

describe.each(DIALECTS)('projections on %s', (dialect) => {
  let t: TestStore;
  beforeAll(async () => {
    t = await openTestStore(dialect);
  });
  afterAll(async () => {
    await t.dispose();
  });

  it('inline: a read right after the append sees it; a rebuild gives identical rows', async () => {
    const table = `names_${randomUUID().slice(0, 8)}`;
    await createReadModel(t.store.db, table);
    t.store.registerProjections([processNames(table)]);
    const ids = Array.from({ length: 5 }, () => `process-${randomUUID()}`);
    for (const [i, id] of ids.entries()) {
      await t.store.append(id, [{ type: 'ProcessCreated', data: { name: `p${i}` } }]);
      expect(await t.store.db.selectFrom(table).select('name').where('id', '=', id).executeTakeFirst()).toEqual({
        name: `p${i}`,
      });
    }
    await t.store.appendMany(
      ids.map((id, i) => ({ streamId: id, events: [{ type: 'ProcessRenamed', data: { name: `q${i}` } }] })),
    );
    await t.store.append(ids[0]!, [
      { type: 'ProcessRenamed', data: { name: 'final' } },
      { type: 'Ignored', data: {} },
    ]);
    const before = await rowsOf(t.store.db, table);
    expect(before).toHaveLength(5);
    expect(before.find((row) => row.id === ids[0])).toMatchObject({ name: 'final', edits: 2 });

    // Corrupt the read model: the rebuild must restore it from the events alone.
    await t.store.db.updateTable(table).set({ name: 'garbage' }).execute();
    const applied = await rebuildProjection(t.store, processNames(table));
    expect(applied).toBe(11);
    expect(await rowsOf(t.store.db, table)).toEqual(before);
  });

  it('async: the runner builds the same rows as a rebuild, and resumes from its checkpoint', async () => {
    const table = `async_${randomUUID().slice(0, 8)}`;
    const rebuiltTable = `rebuilt_${randomUUID().slice(0, 8)}`;
    await createReadModel(t.store.db, table);
    await createReadModel(t.store.db, rebuiltTable);
    const id = `process-${randomUUID()}`;
    await t.store.append(id, [{ type: 'ProcessCreated', data: { name: 'one' } }]);
    let runner = startProjection(t.store, processNames(table), { pollMs: 20, batchSize: 2 });
    let last = await t.store.append(id, [{ type: 'ProcessRenamed', data: { name: 'two' } }]);
    await runner.waitForPosition(last.events[0]!.position);
    await runner.stop();

    last = await t.store.append(id, [{ type: 'ProcessRenamed', data: { name: 'three' } }]);
    runner = startProjection(t.store, processNames(table), { pollMs: 20, batchSize: 2 });
    await runner.waitForPosition(last.events[0]!.position);
    await runner.stop();

    const counts = await rebuildReadModels(t.store, [processNames(rebuiltTable)]);
    expect(counts[rebuiltTable]).toBeGreaterThanOrEqual(3);
    const asyncRows = await rowsOf(t.store.db, table);
    expect(asyncRows.find((row) => row.id === id)).toMatchObject({ name: 'three', edits: 2 });
    expect(asyncRows).toEqual(await rowsOf(t.store.db, rebuiltTable));
  });
});
