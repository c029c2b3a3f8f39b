import type { ExportedTestCase } from '@weft/contracts';

/** The testing service as the catalog reaches it: test cases leave with an export, arrive with an import or fork. */
export interface TestCaseCarrier {
  exportCases(processId: string, organizationId: string): Promise<ExportedTestCase[]>;
  /** Idempotent per requestId; `inputNodeId` of each case already names the new process's node. */
  importCases(request: {
    requestId: string;
    processId: string;
    organizationId: string;
    actor: { userId: string; userName: string };
    testCases: ExportedTestCase[];
  }): Promise<void>;
}
