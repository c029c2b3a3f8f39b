import type { Projection } from '@weft/event-store';
import { testBatchProjection } from './test-batch-projection.js';
import { testCaseProjection } from './test-case-projection.js';
import { testRunProjection } from './test-run-projection.js';

/** Every testing read model; inline (updated in the append's transaction) and rebuildable. */
export const testingProjections: readonly Projection[] = [testCaseProjection, testRunProjection, testBatchProjection];
