import { catalogInternal } from '@weft/contracts';
import type { Bus } from '@weft/bus';
import type { CatalogPort } from '../../application/trigger-ports.js';

/** The catalog over its internal subjects. */
export const busCatalog = (bus: Bus): CatalogPort => ({
  getProcess: (processId, organizationId) => bus.request(catalogInternal.getProcess, { processId, organizationId }),
  listRunningProcesses: async () => (await bus.request(catalogInternal.listRunningProcesses, {})).processes,
  connection: (connectionId, organizationId) =>
    bus.request(catalogInternal.getConnectionSecret, { connectionId, organizationId }),
  replaceConnectionData: async (connectionId, organizationId, data) => {
    await bus.request(catalogInternal.replaceConnectionData, { connectionId, organizationId, data });
  },
  dataBlockSchema: async (schemaId, dataBlockId, organizationId) =>
    (await bus.request(catalogInternal.getDataBlockSchema, { schemaId, dataBlockId, organizationId })).jsonSchema,
});
