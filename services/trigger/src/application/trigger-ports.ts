import type {
  DecryptedConnection,
  ExecutionRecord,
  ExecutionRequest,
  FileReference,
  ProcessRecord,
} from '@weft/contracts';

/** What the trigger service needs from the process catalog (over the bus; in-process fakes never). */
export interface CatalogPort {
  getProcess(processId: string, organizationId?: string): Promise<ProcessRecord>;
  listRunningProcesses(): Promise<{ processId: string; organizationId: string; revision?: number }[]>;
  connection(connectionId: string, organizationId: string): Promise<DecryptedConnection>;
  replaceConnectionData(connectionId: string, organizationId: string, data: Record<string, unknown>): Promise<void>;
  dataBlockSchema(schemaId: string, dataBlockId: string, organizationId: string): Promise<unknown>;
}

/** The engine's side: queue one execution, or queue it and wait for its end. */
export interface ExecutionPort {
  enqueue(request: ExecutionRequest): Promise<void>;
  run(request: ExecutionRequest, waitSeconds: number): Promise<ExecutionRecord>;
}

export interface FilePort {
  store(key: string, content: Uint8Array, contentType: string, name: string): Promise<FileReference>;
}
