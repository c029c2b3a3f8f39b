import { randomUUID } from 'node:crypto';
import {
  badRequest,
  forbidden,
  notFound,
  parsePaging,
  TEST_RUN_STATUSES,
  type HttpCall,
  type HttpReply,
  type ProblemViolation,
  type TestCase,
} from '@weft/contracts';
import type { MessageContext } from '@weft/bus';
import { timeOrderedUuid, type Db } from '@weft/event-store';
import {
  findTestRun,
  listTestRuns,
  testCasesOfProcess,
  testRunStats,
  type RunScope,
} from '../projections/testing-queries.js';
import { assertVisible, requireActor, single, UUID } from './actor-access.js';
import type { BatchRunner } from './batch-runner.js';
import type { TestCaseRequests } from './test-case-requests.js';
import type { TestRunner } from './test-runner.js';
import type { CatalogPort, EnginePort } from './testing-ports.js';

export interface TestRunRequestDeps {
  db: Db;
  catalog: CatalogPort;
  engine: EnginePort;
  runner: TestRunner;
  batches: BatchRunner;
  cases: TestCaseRequests;
  /** Most test cases one batch may run. */
  batchMaxCases: number;
  /** Longest POST /test-runs/batch waits for the batch before answering 202 with its progress. */
  batchMaxWaitSeconds: number;
}

/** ISO date or date-time, as the engine's list accepts. */
const ISO_TIME = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/i;

/** Single runs, batches and the read side of test runs. */
export class TestRunRequests {
  constructor(private readonly deps: TestRunRequestDeps) {}

  /** POST /test-execution/:test_case_id/run */
  async runOne(call: HttpCall, context: MessageContext): Promise<HttpReply> {
    const actor = requireActor(context);
    const testCase = await this.deps.cases.visibleTestCase(actor, call.params.test_case_id);
    const run = await this.deps.runner.run(testCase, {
      runId: randomUUID(),
      executionId: timeOrderedUuid(),
      batchId: null,
      runBy: actor,
      correlationId: context.correlationId,
    });
    return { status: 200, body: run };
  }

  /** POST /test-runs/batch (system keys only) */
  async runBatch(call: HttpCall, context: MessageContext): Promise<HttpReply> {
    const actor = requireActor(context);
    if (!actor.system) throw forbidden('batch runs require a system API key');
    const body = (call.body ?? {}) as { processId?: string; testCaseIds?: string[]; tags?: string[] };
    const errors: ProblemViolation[] = [];
    const waitSeconds = this.readWaitSeconds(call.query, errors);
    if (!body.processId || !UUID.test(body.processId)) errors.push({ path: '/processId', message: 'must be a UUID' });
    if (errors.length > 0) throw badRequest('invalid batch request', errors);
    const process = await this.deps.catalog.getProcess(body.processId as string);
    const cases = await testCasesOfProcess(this.deps.db, process.id);
    const chosen = this.choose(cases, body.testCaseIds, body.tags);
    const toRun = chosen.filter((testCase) => !testCase.disabled);
    if (toRun.length > this.deps.batchMaxCases) {
      throw badRequest(`a batch runs at most ${this.deps.batchMaxCases} test cases; ${toRun.length} were chosen`, [
        { path: '/', message: `chooses ${toRun.length} test cases, more than ${this.deps.batchMaxCases}` },
      ]);
    }
    const batchId = await this.deps.batches.start({
      processId: process.id,
      organizationId: process.organization_id,
      toRun,
      skipped: chosen.filter((testCase) => testCase.disabled),
      runBy: actor,
      correlationId: context.correlationId,
    });
    await this.deps.batches.waitFor(batchId, waitSeconds);
    const batch = await this.deps.batches.view(batchId);
    const location = { location: `/api/v1/test-runs/batches/${batchId}` };
    return { status: batch?.status === 'completed' ? 200 : 202, body: batch, headers: location };
  }

  /** GET /test-runs/batches/:batch_id */
  async getBatch(call: HttpCall, context: MessageContext): Promise<HttpReply> {
    const actor = requireActor(context);
    const id = call.params.batch_id;
    const batch = id && UUID.test(id) ? await this.deps.batches.view(id) : undefined;
    if (!batch) throw notFound(`batch ${id ?? ''} not found`);
    assertVisible(actor, batch, `batch ${id}`);
    return { status: 200, body: batch };
  }

  /** GET /test-runs/ */
  async list(call: HttpCall, context: MessageContext): Promise<HttpReply> {
    const actor = requireActor(context);
    const errors: ProblemViolation[] = [];
    let paging = { page: 1, pageSize: 20 };
    try {
      paging = parsePaging(call.query);
    } catch (error) {
      errors.push(...((error as { problem?: { errors?: ProblemViolation[] } }).problem?.errors ?? []));
    }
    const processId = this.readUuid(call.query, 'processId', errors);
    const testCaseId = this.readUuid(call.query, 'testCaseId', errors);
    const status = single(call.query.status) || undefined;
    if (status && ![...TEST_RUN_STATUSES, 'running'].includes(status)) {
      errors.push({ path: '/query/status', message: `must be one of ${[...TEST_RUN_STATUSES, 'running'].join(', ')}` });
    }
    if (errors.length > 0) throw badRequest('invalid query parameters', errors);
    const body = await listTestRuns(this.deps.db, scopeOf(actor), { ...paging, processId, testCaseId, status });
    return { status: 200, body };
  }

  /** GET /test-runs/:test_run_id, with the execution's node states. */
  async get(call: HttpCall, context: MessageContext): Promise<HttpReply> {
    const actor = requireActor(context);
    const id = call.params.test_run_id;
    const run = id && UUID.test(id) ? await findTestRun(this.deps.db, id) : undefined;
    if (!run) throw notFound(`test run ${id ?? ''} not found`);
    assertVisible(actor, run, `test run ${id}`);
    // No record when the engine refused the run before it started.
    const record = await this.deps.engine.get(run.executionId, run.organizationId).catch(() => undefined);
    const actualOutput = run.actualOutputOmitted ? (record?.output_data ?? null) : run.actualOutput;
    return { status: 200, body: { ...run, actualOutput, nodeStates: record?.node_states ?? [] } };
  }

  /** GET /test-runs/stats */
  async stats(call: HttpCall, context: MessageContext): Promise<HttpReply> {
    const actor = requireActor(context);
    const errors: ProblemViolation[] = [];
    const processId = this.readUuid(call.query, 'processId', errors);
    const time = (name: 'from' | 'to'): string | undefined => {
      const raw = single(call.query[name]);
      if (raw === undefined || raw === '') return undefined;
      const value = new Date(raw);
      if (!ISO_TIME.test(raw) || Number.isNaN(value.getTime())) {
        errors.push({ path: `/query/${name}`, message: 'must be an ISO 8601 time' });
        return undefined;
      }
      return value.toISOString();
    };
    const from = time('from');
    const to = time('to');
    if (errors.length > 0) throw badRequest('invalid query parameters', errors);
    return { status: 200, body: await testRunStats(this.deps.db, scopeOf(actor), { processId, from, to }) };
  }

  /** Ids and tags together: the union, once each; neither: every case of the process. */
  private choose(cases: TestCase[], ids: string[] | undefined, tags: string[] | undefined): TestCase[] {
    if (!ids?.length && !tags?.length) return cases;
    const known = new Set(cases.map((testCase) => testCase.id));
    const unknown = (ids ?? []).filter((id) => !known.has(id));
    if (unknown.length > 0) {
      throw badRequest(
        'unknown test cases',
        unknown.map((id) => ({
          path: `/testCaseIds/${(ids ?? []).indexOf(id)}`,
          message: `${id} is not a test case of this process`,
        })),
      );
    }
    const wanted = new Set(ids ?? []);
    return cases.filter((testCase) => wanted.has(testCase.id) || testCase.tags.some((tag) => tags?.includes(tag)));
  }

  private readWaitSeconds(query: HttpCall['query'], errors: ProblemViolation[]): number {
    const raw = single(query.waitSeconds);
    if (raw === undefined || raw === '') return this.deps.batchMaxWaitSeconds;
    const value = Number(raw);
    if (!Number.isFinite(value) || value < 0 || value > this.deps.batchMaxWaitSeconds) {
      errors.push({
        path: '/query/waitSeconds',
        message: `must be a number from 0 to ${this.deps.batchMaxWaitSeconds}`,
      });
    }
    return value;
  }

  private readUuid(query: HttpCall['query'], name: string, errors: ProblemViolation[]): string | undefined {
    const raw = single(query[name]);
    if (raw === undefined || raw === '') return undefined;
    if (!UUID.test(raw)) errors.push({ path: `/query/${name}`, message: 'must be a UUID' });
    return raw;
  }
}

const scopeOf = (actor: { system: boolean; organizationId: string; processIds?: string[] }): RunScope => ({
  organizationId: actor.system ? undefined : actor.organizationId,
  processIds: actor.processIds,
});
