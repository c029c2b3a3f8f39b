import type { DecryptedConnection, ProcessRecord } from '../catalog/process-record.js';
import { request } from './message-spec.js';

/** Subjects the catalog serves to other services (never exposed over HTTP). */
export const catalogInternal = {
  /** The engine and trigger load a process (graph included) to run or listen to it. 404 problem when unknown. */
  getProcess: request<{ processId: string; organizationId?: string }, ProcessRecord>(
    'weft.catalog.internal.process.get',
    ['engine', 'trigger', 'testing'],
    'process-catalog',
  ),
  /** Decrypted credentials of a connection, for nodes and mail triggers. 404 problem when unknown or another org's. */
  getConnectionSecret: request<{ connectionId: string; organizationId: string }, DecryptedConnection>(
    'weft.catalog.internal.connection.get-secret',
    ['engine', 'trigger'],
    'process-catalog',
  ),
  /** Every running process (id and organization): the trigger service restores its listeners from it. */
  listRunningProcesses: request<Record<string, never>, { processes: { processId: string; organizationId: string }[] }>(
    'weft.catalog.internal.process.list-running',
    ['trigger'],
    'process-catalog',
  ),
  /**
   * Replaces a connection's secret data (a refreshed OAuth token), sealed by the catalog and appended
   * as ConnectionDataReplaced. 404 problem when unknown or another organization's.
   */
  replaceConnectionData: request<
    { connectionId: string; organizationId: string; data: Record<string, unknown> },
    { connectionId: string }
  >('weft.catalog.internal.connection.replace-data', ['trigger'], 'process-catalog'),
  /** The JSON schema of one data block, for webhook payload validation. 404 problem when unknown or another org's. */
  getDataBlockSchema: request<
    { schemaId: string; dataBlockId: string; organizationId: string },
    { schemaId: string; dataBlockId: string; jsonSchema: unknown }
  >('weft.catalog.internal.schema.data-block', ['trigger'], 'process-catalog'),
  /** Named data blocks of a schema with their JSON schemas, for the engine's schematization node. 404 problem when unknown or another org's. */
  getSchemaDataBlocks: request<
    { schemaId: string; organizationId: string; names: string[] },
    { schemaId: string; dataBlocks: { id: string; name: string; jsonSchema: unknown }[] }
  >('weft.catalog.internal.schema.data-blocks', ['engine'], 'process-catalog'),
};
