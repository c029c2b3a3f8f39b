import { catalogInternal, type DecryptedConnection, type ProcessRecord } from '@weft/contracts';
import type { Bus } from '@weft/bus';
import type { ProcessDirectory } from '../../application/engine-ports.js';

/** Processes and connection secrets from the process catalog, over the bus. */
export class BusProcessDirectory implements ProcessDirectory {
  constructor(private readonly bus: Bus) {}

  getProcess(processId: string, organizationId?: string): Promise<ProcessRecord> {
    return this.bus.request(catalogInternal.getProcess, organizationId ? { processId, organizationId } : { processId });
  }

  getConnection(connectionId: string, organizationId: string): Promise<DecryptedConnection> {
    return this.bus.request(catalogInternal.getConnectionSecret, { connectionId, organizationId });
  }
}
