import { testingInternal } from '@weft/contracts';
import type { Bus } from '@weft/bus';
import type { TestCaseCarrier } from '../../application/test-case-carrier.js';

/** The testing service's internal subjects for test cases travelling with their process. */
export const busTestCases = (bus: Bus): TestCaseCarrier => ({
  exportCases: async (processId, organizationId) =>
    (await bus.request(testingInternal.exportTestCases, { processId, organizationId })).testCases,
  importCases: async (request) => {
    await bus.request(testingInternal.importTestCases, request);
  },
});
