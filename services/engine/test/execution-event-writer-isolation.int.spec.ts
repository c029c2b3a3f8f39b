import { sql } from 'kysely';
import { openDatabase, PostgresEventStore, type Database, type StreamAppend } from '@weft/event-store';
import { AppendRefusedError, ExecutionEventWriter } from '../src/application/execution-event-writer.js';
import { testDatabaseUrl } from './support/test-services.js';

/**
 * A group commit holds many executions' events; a value the database refuses (jsonb takes no
 * U+0000 and no lone surrogate) must fail only the stream that holds it, on PGlite (embedded)
 * and PostgreSQL (distributed) alike.
 */
describe.each(['embedded', 'distributed'] as const)('group commit with a refused value (%s)', (mode) => {
  let database: Database;
  let store: PostgresEventStore;
  let writer: ExecutionEventWriter;
  const commits: number[] = [];
  const schema = `test_writer_${crypto.randomUUID().replace(/-/g, '').slice(0, 12)}`;

  beforeAll(async () => {
    database =
      mode === 'embedded'
        ? await openDatabase({ dataDir: 'memory://' })
        : await openDatabase({ url: testDatabaseUrl(), schema });
    store = await PostgresEventStore.open(database);
    writer = new ExecutionEventWriter(async (batch: readonly StreamAppend[]) => {
      commits.push(batch.length);
      await store.appendMany(batch);
    });
  });
  afterAll(async () => {
    await store.close();
    if (mode === 'distributed') await sql.raw(`DROP SCHEMA "${schema}" CASCADE`).execute(database.db);
    await database.close();
  });

  const event = (data: unknown) => ({ type: 'NodeCompleted', data });
  const stream = () => `execution-${crypto.randomUUID()}`;

  test.each([
    ['a NUL character', { out: 'a\u0000b' }, '22P05'],
    ['a NUL character in a key', { ['k\u0000']: 1 }, '22P05'],
    ['a lone surrogate', { out: ['\ud800'] }, '22P02'],
  ])('%s fails its stream alone; its earlier appends and every other stream commit', async (_n, poison, state) => {
    commits.length = 0;
    const healthy = Array.from({ length: 5 }, stream);
    const poisoned = stream();
    const results = await Promise.allSettled([
      ...healthy.map((id) => writer.append(id, [event({ n: 1 })], 'no_stream')),
      writer.append(poisoned, [event({ n: 1 })], 'no_stream'),
      writer.append(poisoned, [event(poison)], 1),
      writer.append(poisoned, [event({ n: 3 })], 2),
      ...healthy.map((id) => writer.append(id, [event({ n: 2 })], 1)),
    ]);
    expect(results.map((r) => r.status)).toEqual([
      ...Array(5).fill('fulfilled'),
      'fulfilled',
      'rejected',
      'rejected',
      ...Array(5).fill('fulfilled'),
    ]);
    const refused = (results[6] as PromiseRejectedResult).reason as AppendRefusedError;
    expect(refused).toBeInstanceOf(AppendRefusedError);
    expect(refused).toMatchObject({ streamId: poisoned, sqlState: state });
    expect(refused.events.map((e) => e.data)).toEqual([poison]);
    expect((results[7] as PromiseRejectedResult).reason).toBe(refused);
    for (const id of healthy) expect(await store.streamVersion(id)).toBe(2);
    expect(await store.streamVersion(poisoned)).toBe(1);
    // One try together, then one per stream (the poisoned one split further to find the refused append).
    expect(commits[0]).toBe(13);
  });
});
