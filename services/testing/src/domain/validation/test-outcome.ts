import type { ExpectedFiles, TestRun, TestRunStatus } from '@weft/contracts';
import { compareFiles } from './expected-files.js';
import { isIgnored, withoutIgnoredFields } from './ignore-fields.js';
import { describeViolation, validateOutput } from './output-schema.js';

/** What a finished execution means for its test run: the judged fields of the contract's TestRun. */
export type TestOutcome = Pick<
  TestRun,
  | 'validationResults'
  | 'actualOutput'
  | 'actualOutputOmitted'
  | 'schemaErrors'
  | 'fileComparisonResults'
  | 'errorMessage'
> & { status: TestRunStatus };

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

/** Violations kept per run (the rest counted): an output of a million bad rows must not make a million-entry event. */
export interface JudgeLimits {
  maxViolations: number;
}

/**
 * passed: the output (ignoreFields removed) matches the schema and the files match; failed: one
 * violation per mismatch; error: the execution failed or was cancelled; timeout: it timed out or
 * was still running when the test stopped waiting.
 */
export function judgeExecution(
  execution: FinishedExecution,
  expectations: Expectations,
  limits: JudgeLimits,
): TestOutcome {
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
  const kept = errors.slice(0, limits.maxViolations);
  const fileResults = files?.results;
  return {
    status: errors.length === 0 ? 'passed' : 'failed',
    validationResults: {
      valid: errors.length === 0,
      errors: kept,
      ...(errors.length > kept.length ? { omittedErrors: errors.length - kept.length } : {}),
    },
    actualOutput: execution.output,
    schemaErrors: schemaViolations.slice(0, limits.maxViolations).map(describeViolation),
    fileComparisonResults: fileResults
      ? { ...fileResults, actualFiles: fileResults.actualFiles.slice(0, limits.maxViolations) }
      : null,
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
