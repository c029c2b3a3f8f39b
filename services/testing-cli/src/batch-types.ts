import type { TestBatch, TestRun } from '@weft/contracts';

/** The parts of Weft's batch answer (contracts TestBatch, docs/testing.md) the CLI reads: types only, no runtime import. */
export type BatchRun = Pick<
  TestRun,
  'id' | 'testCaseId' | 'testCaseName' | 'status' | 'durationMs' | 'validationResults' | 'errorMessage'
>;

export type Batch = Pick<TestBatch, 'id' | 'processId' | 'status' | 'total' | 'done' | 'skipped' | 'stats'> & {
  runs: BatchRun[];
};
