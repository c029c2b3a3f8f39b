import type { ExecutionRecord, ExecutionRequest, ProcessRecord } from '@weft/contracts';

/** The engine as the testing service uses it: enqueue on its work queue and wait, read a record. */
export interface EnginePort {
  run(request: ExecutionRequest, waitSeconds: number): Promise<ExecutionRecord>;
  get(executionId: string, organizationId: string): Promise<ExecutionRecord>;
}

/** The catalog's process records (organization checked by the catalog when given). */
export interface CatalogPort {
  getProcess(processId: string, organizationId?: string): Promise<ProcessRecord>;
}

/** Time comes in from outside, so tests can hold it still. */
export type Clock = () => Date;
