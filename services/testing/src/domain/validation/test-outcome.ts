import type { ExpectedFiles, FileComparisonResults, TestRunStatus, ValidationResults } from '@weft/contracts';
import { compareFiles } from './expected-files.js';
import { isIgnored, withoutIgnoredFields } from './ignore-fields.js';
import { describeViolation, validateOutput } from './output-schema.js';

/** What a finished execution means for its test run. */
export interface TestOutcome {
  status: TestRunStatus;
  validationResults: ValidationResults | null;
  actualOutput: unknown;
  schemaErrors: string[];
  fileComparisonResults: FileComparisonResults | null;
  errorMessage: string | null;
}

export interface FinishedExecution {
  status: 'completed' | 'failed' | 'timeout' | 'cancelled' | 'running';
  output: unknown;
  errorMessage: string | null;
}

export interface Expectations {
  expectedOutputSchema: Record<string, unknown> | boolean;
  expectedFiles: ExpectedFiles | null;
  ignoreFields: readonly string[];
}

/**
 * passed: the output (ignoreFields removed) matches the schema and the files match; failed: one
 * violation per mismatch; error: the execution failed or was cancelled; timeout: it timed out or
 * was still running when the test stopped waiting.
 */
export function judgeExecution(execution: FinishedExecution, expectations: Expectations): TestOutcome {
  if (execution.status === 'timeout' || execution.status === 'running') {
    return failedBeforeOutput('timeout', execution.output, execution.errorMessage ?? 'the execution timed out');
  }
  if (execution.status !== 'completed') {
    return failedBeforeOutput(
      'error',
      execution.output,
      execution.errorMessage ?? `the execution was ${execution.status}`,
    );
  }
  const { output: checked, removed } = withoutIgnoredFields(execution.output, expectations.ignoreFields);
  const schemaViolations = validateOutput(expectations.expectedOutputSchema, checked).filter(
    (violation) => !isIgnored(violation.path, removed),
  );
  const files = expectations.expectedFiles ? compareFiles(expectations.expectedFiles, checked) : undefined;
  const errors = [...schemaViolations, ...(files?.violations ?? [])];
  return {
    status: errors.length === 0 ? 'passed' : 'failed',
    validationResults: { valid: errors.length === 0, errors },
    actualOutput: execution.output,
    schemaErrors: schemaViolations.map(describeViolation),
    fileComparisonResults: files?.results ?? null,
    errorMessage: null,
  };
}

const failedBeforeOutput = (status: 'error' | 'timeout', output: unknown, errorMessage: string): TestOutcome => ({
  status,
  validationResults: null,
  actualOutput: output ?? null,
  schemaErrors: [],
  fileComparisonResults: null,
  errorMessage,
});
