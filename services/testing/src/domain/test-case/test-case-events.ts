import type { TestCase } from '@weft/contracts';

/** The editable fields of a test case (those of the contract's TestCase), as stored in its events. */
export type TestCaseFields = Pick<
  TestCase,
  | 'name'
  | 'description'
  | 'inputNodeId'
  | 'inputData'
  | 'expectedOutputSchema'
  | 'expectedFiles'
  | 'ignoreFields'
  | 'tags'
  | 'disabled'
>;

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
