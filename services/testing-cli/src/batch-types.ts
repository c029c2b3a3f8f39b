/** The parts of Weft's batch answer the CLI reads (docs/testing.md; contracts TestBatch). */
export interface BatchRun {
  id: string;
  testCaseId: string;
  testCaseName: string;
  status: 'passed' | 'failed' | 'error' | 'timeout' | 'running';
  durationMs: number | null;
  validationResults: { valid: boolean; errors: { field: string; message: string; path: string }[] } | null;
  errorMessage: string | null;
}

export interface Batch {
  id: string;
  processId: string;
  status: 'running' | 'completed';
  total: number;
  done: number;
  skipped: { testCaseId: string; name: string; reason: string }[];
  runs: BatchRun[];
  stats: {
    total: number;
    passed: number;
    failed: number;
    error: number;
    timeout: number;
    passRate: number;
    averageDuration: number;
  };
}
