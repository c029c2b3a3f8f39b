import type { ExpectedFiles } from '@weft/contracts';

/** The editable fields of a test case, as stored in its events. */
export interface TestCaseFields {
  name: string;
  description: string;
  inputNodeId: string;
  inputData: unknown;
  expectedOutputSchema: Record<string, unknown> | boolean;
  expectedFiles: ExpectedFiles | null;
  ignoreFields: string[];
  tags: string[];
  disabled: boolean;
}

export type TestCaseEvent =
  | {
      type: 'TestCaseCreated';
      data: TestCaseFields & {
        processId: string;
        organizationId: string;
        createdBy: string;
        createdById: string;
        createdAt: string;
      };
    }
  | { type: 'TestCaseChanged'; data: TestCaseFields & { changedAt: string } }
  | { type: 'TestCaseDeleted'; data: { deletedAt: string } };

export const TEST_CASE_EVENT_TYPES = ['TestCaseCreated', 'TestCaseChanged', 'TestCaseDeleted'] as const;

export const testCaseStream = (id: string): string => `testcase-${id}`;
