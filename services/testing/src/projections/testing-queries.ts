import { sql } from 'kysely';
import type { Page, TestCase, TestRun, TestRunStatus, TestStats } from '@weft/contracts';
import type { Db } from '@weft/event-store';
import type { BatchRow } from './test-batch-projection.js';
import { parseJson } from './json-column.js';

export async function findTestCase(db: Db, id: string): Promise<TestCase | undefined> {
  const row = await db.selectFrom('testing_test_cases').select('document').where('id', '=', id).executeTakeFirst();
  return row ? parseJson<TestCase>(row.document) : undefined;
}

/** Every test case of a process, by name. */
export async function testCasesOfProcess(db: Db, processId: string): Promise<TestCase[]> {
  const rows = await db
    .selectFrom('testing_test_cases')
    .select('document')
    .where('process_id', '=', processId)
    .orderBy('name')
    .orderBy('id')
    .execute();
  return rows.map((row) => parseJson<TestCase>(row.document));
}

export async function listTestCases(
  db: Db,
  processId: string,
  filter: { page: number; pageSize: number; tags: string[]; disabled?: boolean },
): Promise<Page<TestCase>> {
  let query = db.selectFrom('testing_test_cases').where('process_id', '=', processId);
  if (filter.disabled !== undefined) query = query.where('disabled', '=', filter.disabled);
  if (filter.tags.length > 0) {
    query = query.where((eb) =>
      eb.or(filter.tags.map((tag) => eb(sql`tags`, '@>', sql`${JSON.stringify([tag])}::jsonb`))),
    );
  }
  const total = await query.select((eb) => eb.fn.countAll<string>().as('count')).executeTakeFirstOrThrow();
  const rows = await query
    .select('document')
    .orderBy('name')
    .orderBy('id')
    .limit(filter.pageSize)
    .offset((filter.page - 1) * filter.pageSize)
    .execute();
  return {
    items: rows.map((row) => parseJson<TestCase>(row.document)),
    page: filter.page,
    pageSize: filter.pageSize,
    total: Number(total.count),
  };
}

export async function findTestRun(db: Db, id: string): Promise<TestRun | undefined> {
  const row = await db.selectFrom('testing_test_runs').select('document').where('id', '=', id).executeTakeFirst();
  return row ? parseJson<TestRun>(row.document) : undefined;
}

export interface RunScope {
  /** Absent for system keys: every organization. */
  organizationId?: string;
  /** A restricted key sees only these processes. */
  processIds?: string[];
}

export async function listTestRuns(
  db: Db,
  scope: RunScope,
  filter: { page: number; pageSize: number; processId?: string; testCaseId?: string; status?: string },
): Promise<Page<TestRun>> {
  let query = db.selectFrom('testing_test_runs');
  if (scope.organizationId) query = query.where('organization_id', '=', scope.organizationId);
  if (scope.processIds) query = query.where('process_id', 'in', scope.processIds.length ? scope.processIds : ['']);
  if (filter.processId) query = query.where('process_id', '=', filter.processId);
  if (filter.testCaseId) query = query.where('test_case_id', '=', filter.testCaseId);
  if (filter.status) query = query.where('status', '=', filter.status);
  const total = await query.select((eb) => eb.fn.countAll<string>().as('count')).executeTakeFirstOrThrow();
  const rows = await query
    .select('document')
    .orderBy('started_at', 'desc')
    .orderBy('id', 'desc')
    .limit(filter.pageSize)
    .offset((filter.page - 1) * filter.pageSize)
    .execute();
  return {
    items: rows.map((row) => parseJson<TestRun>(row.document)),
    page: filter.page,
    pageSize: filter.pageSize,
    total: Number(total.count),
  };
}

/** Statistics over finished runs (running ones are not counted yet). */
export async function testRunStats(
  db: Db,
  scope: RunScope,
  filter: { processId?: string; from?: string; to?: string; batchId?: string },
): Promise<TestStats> {
  let query = db.selectFrom('testing_test_runs').where('status', '!=', 'running');
  if (scope.organizationId) query = query.where('organization_id', '=', scope.organizationId);
  if (scope.processIds) query = query.where('process_id', 'in', scope.processIds.length ? scope.processIds : ['']);
  if (filter.processId) query = query.where('process_id', '=', filter.processId);
  if (filter.batchId) query = query.where('batch_id', '=', filter.batchId);
  if (filter.from) query = query.where('started_at', '>=', filter.from);
  if (filter.to) query = query.where('started_at', '<=', filter.to);
  const rows = await query
    .select(['status', (eb) => eb.fn.countAll<string>().as('count'), (eb) => eb.fn.sum<string>('duration_ms').as('ms')])
    .groupBy('status')
    .execute();
  return statsOf(
    rows.map((row) => ({ status: row.status as TestRunStatus, count: Number(row.count), ms: Number(row.ms ?? 0) })),
  );
}

export function statsOf(groups: { status: TestRunStatus; count: number; ms: number }[]): TestStats {
  const count = (status: TestRunStatus) => groups.find((group) => group.status === status)?.count ?? 0;
  const total = groups.reduce((sum, group) => sum + group.count, 0);
  const ms = groups.reduce((sum, group) => sum + group.ms, 0);
  return {
    total,
    passed: count('passed'),
    failed: count('failed'),
    error: count('error'),
    timeout: count('timeout'),
    passRate: total === 0 ? 0 : count('passed') / total,
    averageDuration: total === 0 ? 0 : ms / total / 1000,
  };
}

export async function findBatch(db: Db, id: string): Promise<BatchRow | undefined> {
  const row = await db.selectFrom('testing_batches').select('document').where('id', '=', id).executeTakeFirst();
  return row ? parseJson<BatchRow>(row.document) : undefined;
}

/** Batches a stopped service left running, to resume. */
export async function runningBatches(db: Db): Promise<BatchRow[]> {
  const rows = await db.selectFrom('testing_batches').select('document').where('status', '=', 'running').execute();
  return rows.map((row) => parseJson<BatchRow>(row.document));
}

export async function runsOfBatch(db: Db, batchId: string): Promise<TestRun[]> {
  const rows = await db
    .selectFrom('testing_test_runs')
    .select('document')
    .where('batch_id', '=', batchId)
    .orderBy('started_at')
    .orderBy('id')
    .execute();
  return rows.map((row) => parseJson<TestRun>(row.document));
}
