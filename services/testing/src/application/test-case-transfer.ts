import { createHash } from 'node:crypto';
import { badRequest, type ExportedTestCase, type ProcessRecord } from '@weft/contracts';
import type { Db, EventStore } from '@weft/event-store';
import { testCaseStream } from '../domain/test-case/test-case-events.js';
import { testCasesOfProcess } from '../projections/testing-queries.js';
import { handleTestCaseCommand } from './test-case-commands.js';
import { readTestCaseInput } from './test-case-input.js';
import type { CatalogPort, Clock } from './testing-ports.js';

export interface TestCaseTransferDeps {
  store: EventStore;
  db: Db;
  catalog: CatalogPort;
  clock: Clock;
}

/** Test cases leaving with an export and arriving with an import or fork (asked by the catalog). */
export class TestCaseTransfer {
  constructor(private readonly deps: TestCaseTransferDeps) {}

  async exportCases(request: {
    processId: string;
    organizationId: string;
  }): Promise<{ testCases: ExportedTestCase[] }> {
    const cases = await testCasesOfProcess(this.deps.db, request.processId);
    return {
      testCases: cases
        .filter((testCase) => testCase.organizationId === request.organizationId)
        .map((testCase) => ({
          name: testCase.name,
          description: testCase.description,
          inputNodeId: testCase.inputNodeId,
          inputData: testCase.inputData,
          expectedOutputSchema: testCase.expectedOutputSchema,
          expectedFiles: testCase.expectedFiles,
          ignoreFields: testCase.ignoreFields,
          tags: testCase.tags,
          disabled: testCase.disabled,
        })),
    };
  }

  /**
   * Creates the cases on the new process. Each case's id derives from the request id and its
   * index, so a retried import appends nothing twice.
   */
  async importCases(request: {
    requestId: string;
    processId: string;
    organizationId: string;
    actor: { userId: string; userName: string };
    testCases: ExportedTestCase[];
  }): Promise<{ testCaseIds: string[] }> {
    const process: ProcessRecord = await this.deps.catalog.getProcess(request.processId, request.organizationId);
    const checked = request.testCases.map((testCase, index) => {
      try {
        return readTestCaseInput(testCase, process);
      } catch (error) {
        const problem = (error as { problem?: { errors?: { path: string; message: string }[] } }).problem;
        throw badRequest(
          'invalid test case in the document',
          (problem?.errors ?? []).map((violation) => ({ ...violation, path: `/testCases/${index}${violation.path}` })),
        );
      }
    });
    const ids: string[] = [];
    for (const [index, fields] of checked.entries()) {
      const id = derivedId(`${request.requestId}:${index}`);
      ids.push(id);
      if ((await this.deps.store.streamVersion(testCaseStream(id))) > 0) continue;
      await handleTestCaseCommand(
        this.deps.store,
        id,
        {
          type: 'CreateTestCase',
          fields,
          processId: process.id,
          organizationId: process.organization_id,
          actor: request.actor,
          now: this.deps.clock().toISOString(),
        },
        {
          actorId: request.actor.userId,
          actorName: request.actor.userName,
          organizationId: process.organization_id,
          processId: process.id,
        },
      );
    }
    return { testCaseIds: ids };
  }
}

/** A UUID (v8 layout) derived from a name. */
function derivedId(name: string): string {
  const hex = createHash('sha256').update(name).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-8${hex.slice(13, 16)}-${((parseInt(hex[16]!, 16) & 0x3) | 0x8).toString(16)}${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
