import { randomUUID } from 'node:crypto';
import {
  badRequest,
  notFound,
  parsePaging,
  type HttpCall,
  type HttpReply,
  type ProblemViolation,
  type ProcessRecord,
  type TestCase,
} from '@weft/contracts';
import type { Actor, MessageContext } from '@weft/bus';
import type { Db, EventStore } from '@weft/event-store';
import { findTestCase, listTestCases } from '../projections/testing-queries.js';
import { assertVisible, many, requireActor, single, UUID } from './actor-access.js';
import { handleTestCaseCommand } from './test-case-commands.js';
import { readTestCaseInput } from './test-case-input.js';
import type { CatalogPort, Clock } from './testing-ports.js';

export interface TestCaseRequestDeps {
  store: EventStore;
  db: Db;
  catalog: CatalogPort;
  clock: Clock;
}

/** Test case CRUD (POST/GET by-process, GET/PUT/DELETE by-id); every refusal before any event. */
export class TestCaseRequests {
  constructor(private readonly deps: TestCaseRequestDeps) {}

  async create(call: HttpCall, context: MessageContext): Promise<HttpReply> {
    const actor = requireActor(context);
    const process = await this.visibleProcess(actor, call.params.process_id);
    const fields = readTestCaseInput(call.body, process);
    const id = randomUUID();
    await handleTestCaseCommand(
      this.deps.store,
      id,
      {
        type: 'CreateTestCase',
        fields,
        processId: process.id,
        organizationId: process.organization_id,
        actor,
        now: this.deps.clock().toISOString(),
      },
      metadataOf(actor, process.organization_id, process.id, context),
    );
    return {
      status: 201,
      body: await findTestCase(this.deps.db, id),
      headers: { location: `/api/v1/test-cases/by-id/${id}` },
    };
  }

  async list(call: HttpCall, context: MessageContext): Promise<HttpReply> {
    const process = await this.visibleProcess(requireActor(context), call.params.process_id);
    const errors: ProblemViolation[] = [];
    let paging = { page: 1, pageSize: 20 };
    try {
      paging = parsePaging(call.query);
    } catch (error) {
      errors.push(...((error as { problem?: { errors?: ProblemViolation[] } }).problem?.errors ?? []));
    }
    const disabledText = single(call.query.disabled);
    if (disabledText !== undefined && disabledText !== '' && disabledText !== 'true' && disabledText !== 'false') {
      errors.push({ path: '/query/disabled', message: 'must be true or false' });
    }
    if (errors.length > 0) throw badRequest('invalid query parameters', errors);
    const disabled = disabledText === 'true' ? true : disabledText === 'false' ? false : undefined;
    const body = await listTestCases(this.deps.db, process.id, { ...paging, tags: many(call.query.tag), disabled });
    return { status: 200, body };
  }

  async get(call: HttpCall, context: MessageContext): Promise<HttpReply> {
    return { status: 200, body: await this.visibleTestCase(requireActor(context), call.params.id) };
  }

  async update(call: HttpCall, context: MessageContext): Promise<HttpReply> {
    const actor = requireActor(context);
    const testCase = await this.visibleTestCase(actor, call.params.id);
    const process = await this.deps.catalog.getProcess(testCase.processId, testCase.organizationId);
    const fields = readTestCaseInput(call.body, process);
    await handleTestCaseCommand(
      this.deps.store,
      testCase.id,
      { type: 'ChangeTestCase', fields, now: this.deps.clock().toISOString() },
      metadataOf(actor, testCase.organizationId, testCase.processId, context),
    );
    return { status: 200, body: await findTestCase(this.deps.db, testCase.id) };
  }

  async remove(call: HttpCall, context: MessageContext): Promise<HttpReply> {
    const actor = requireActor(context);
    const testCase = await this.visibleTestCase(actor, call.params.id);
    await handleTestCaseCommand(
      this.deps.store,
      testCase.id,
      { type: 'DeleteTestCase', now: this.deps.clock().toISOString() },
      metadataOf(actor, testCase.organizationId, testCase.processId, context),
    );
    return { status: 204 };
  }

  async visibleTestCase(actor: Actor, id: string | undefined): Promise<TestCase> {
    const testCase = id && UUID.test(id) ? await findTestCase(this.deps.db, id) : undefined;
    if (!testCase) throw notFound(`test case ${id ?? ''} not found`);
    assertVisible(actor, testCase, `test case ${id}`);
    return testCase;
  }

  private async visibleProcess(actor: Actor, processId: string | undefined): Promise<ProcessRecord> {
    if (!processId || !UUID.test(processId)) throw notFound(`process ${processId ?? ''} not found`);
    const process = await this.deps.catalog.getProcess(processId, actor.system ? undefined : actor.organizationId);
    assertVisible(actor, { organizationId: process.organization_id, processId: process.id }, `process ${processId}`);
    return process;
  }
}

/** Event metadata; `processId` makes the published subject carry the process (weft.events.testcase.<org>.<process>.*). */
export const metadataOf = (actor: Actor, organizationId: string, processId: string, context: MessageContext) => ({
  actorId: actor.userId,
  actorName: actor.userName,
  organizationId,
  processId,
  correlationId: context.correlationId,
});
