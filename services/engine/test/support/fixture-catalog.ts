import { catalogInternal, notFound, type DecryptedConnection, type ProcessRecord } from '@weft/contracts';
import type { Bus, Subscription } from '@weft/bus';
import type { ProcessDirectory } from '../../src/application/engine-ports.js';

/**
 * A test double of ANOTHER service (the process catalog): fixture processes and connections,
 * served on the bus subjects the real catalog serves, or handed to the engine directly.
 */
export class FixtureCatalog implements ProcessDirectory {
  readonly processes = new Map<string, ProcessRecord>();
  readonly connections = new Map<string, DecryptedConnection>();

  add(process: ProcessRecord): ProcessRecord {
    this.processes.set(process.id, process);
    return process;
  }

  addConnection(connection: DecryptedConnection): DecryptedConnection {
    this.connections.set(connection.id, connection);
    return connection;
  }

  async getProcess(processId: string, organizationId?: string): Promise<ProcessRecord> {
    const process = this.processes.get(processId);
    if (!process || (organizationId && process.organization_id !== organizationId))
      throw notFound(`process ${processId} not found`);
    return structuredClone(process);
  }

  async getConnection(connectionId: string, organizationId: string): Promise<DecryptedConnection> {
    const connection = this.connections.get(connectionId);
    if (!connection || connection.organizationId !== organizationId)
      throw notFound(`connection ${connectionId} not found`);
    return structuredClone(connection);
  }

  async serveOn(bus: Bus): Promise<Subscription[]> {
    return [
      await bus.serve(catalogInternal.getProcess, (request) =>
        this.getProcess(request.processId, request.organizationId),
      ),
      await bus.serve(catalogInternal.getConnectionSecret, (request) =>
        this.getConnection(request.connectionId, request.organizationId),
      ),
    ];
  }
}
