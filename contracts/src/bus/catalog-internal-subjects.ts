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
};
