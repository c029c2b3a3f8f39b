/** Test cases and test runs (spec "Test case", "Test run"; camelCase as DESIGN.md fixes). */

/** What a test expects among the file references of the output (`{name, url, size}` objects). */
export interface ExpectedFiles {
  /** How many file references the output must hold; unchecked when absent. */
  count?: number;
  /** Each pattern must be matched by a different file of at least `minSize` bytes. */
  files?: { namePattern: string; minSize?: number }[];
}

/** The fields a client sends to create or replace a test case. */
export interface TestCaseInput {
  name: string;
  description?: string;
  inputNodeId: string;
  inputData?: unknown;
  expectedOutputSchema?: Record<string, unknown> | boolean;
  expectedFiles?: ExpectedFiles | null;
  ignoreFields?: string[];
  tags?: string[];
  disabled?: boolean;
}

export interface TestCase {
  id: string;
  processId: string;
  organizationId: string;
  name: string;
  description: string;
  inputNodeId: string;
  inputData: unknown;
  expectedOutputSchema: Record<string, unknown> | boolean;
  expectedFiles: ExpectedFiles | null;
  ignoreFields: string[];
  tags: string[];
  disabled: boolean;
  createdBy: string;
  createdById: string;
  createdAt: string;
  updatedAt: string;
  /** Stream version: changes with every edit. */
  revision: number;
}

export const TEST_RUN_STATUSES = ['passed', 'failed', 'error', 'timeout'] as const;
export type TestRunStatus = (typeof TEST_RUN_STATUSES)[number];

/** One violation: `path` is a JSONPath into the actual output (`$.Out.total`), `$` the output as a whole. */
export interface ValidationError {
  field: string;
  message: string;
  path: string;
}

export interface ValidationResults {
  valid: boolean;
  errors: ValidationError[];
  /** Violations beyond WEFT_TESTING_MAX_VIOLATIONS, counted but not listed. */
  omittedErrors?: number;
}

/** A file reference found in the output. */
export interface ActualFile {
  name: string;
  url: string;
  size: number;
  /** Where in the output it was found. */
  path: string;
}

export interface FileComparisonResults {
  valid: boolean;
  expectedCount: number | null;
  actualCount: number;
  countMatches: boolean;
  /** One entry per expected file, in order: the actual file it matched, or why none did. */
  files: {
    namePattern: string;
    minSize: number;
    matched: boolean;
    actualFile: ActualFile | null;
    reason: string | null;
  }[];
  actualFiles: ActualFile[];
}

export interface TestRun {
  id: string;
  testCaseId: string;
  testCaseName: string;
  processId: string;
  organizationId: string;
  /** The batch it ran in, null for a single run. */
  batchId: string | null;
  executionId: string;
  /** The execution record's id (the engine uses the execution id as the record id). */
  processExecutionId: string;
  /** `running` only while the run is in progress. */
  status: TestRunStatus | 'running';
  startedAt: string;
  completedAt: string | null;
  durationSeconds: number | null;
  durationMs: number | null;
  validationResults: ValidationResults | null;
  /** The execution's output_data; null in lists when it was larger than WEFT_EVENT_VALUE_INLINE_MAX_BYTES. */
  actualOutput: unknown;
  /** actualOutput was too large to keep in the run; GET /test-runs/:id reads it from the execution. */
  actualOutputOmitted?: boolean;
  schemaErrors: string[];
  fileComparisonResults: FileComparisonResults | null;
  /** Why the run is `error` or `timeout`. */
  errorMessage: string | null;
  runByUserId: string;
}

/** A test run as GET /test-runs/:id shows it: with the execution's node states. */
export interface TestRunDetail extends TestRun {
  nodeStates: unknown[];
}

export interface TestStats {
  total: number;
  passed: number;
  failed: number;
  error: number;
  timeout: number;
  /** passed / total, a fraction of 1 (0 when there is none). */
  passRate: number;
  /** Seconds. */
  averageDuration: number;
}

export interface TestBatch {
  id: string;
  processId: string;
  organizationId: string;
  status: 'running' | 'completed';
  /** Cases to run (skipped ones excluded). */
  total: number;
  /** Runs finished so far. */
  done: number;
  skipped: { testCaseId: string; name: string; reason: 'disabled' }[];
  runs: TestRun[];
  stats: TestStats;
  startedAt: string;
  completedAt: string | null;
  runByUserId: string;
}

/** A test case inside an export document: its node is named by the document's node key. */
export type ExportedTestCase = Omit<TestCaseInput, 'inputNodeId'> & { inputNodeId: string };
