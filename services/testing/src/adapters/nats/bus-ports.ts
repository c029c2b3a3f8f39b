import { catalogInternal, engineInternal } from '@weft/contracts';
import type { Bus } from '@weft/bus';
import type { CatalogPort, EnginePort } from '../../application/testing-ports.js';

/** Headroom over the engine's wait for its answer to travel back. */
const REPLY_MARGIN_MS = 10_000;

/** The engine's enqueue-and-wait subject (its work queue deduplicates by execution id) and record reads. */
export const busEngine = (bus: Bus): EnginePort => ({
  run: (request, waitSeconds) =>
    bus.request(
      engineInternal.runExecution,
      { ...request, waitSeconds },
      { timeoutMs: waitSeconds * 1000 + REPLY_MARGIN_MS, correlationId: request.correlationId },
    ),
  get: (executionId, organizationId) => bus.request(engineInternal.getExecution, { executionId, organizationId }),
});

export const busCatalog = (bus: Bus): CatalogPort => ({
  getProcess: (processId, organizationId) => bus.request(catalogInternal.getProcess, { processId, organizationId }),
});
