import { catalogInternal } from '@weft/contracts';
import type { Bus } from '@weft/bus';

/** The JSON schemas of a process schema's data blocks, by block name. */
export interface DataBlockSchemas {
  /** The named blocks found in the schema (absent names are left out); rejects when the schema is unknown. */
  blocksOf(organizationId: string, schemaId: string, names: string[]): Promise<{ name: string; jsonSchema: unknown }[]>;
}

/** From the process catalog over the bus (weft.catalog.internal.schema.data-blocks). */
export const busDataBlockSchemas = (bus: Bus): DataBlockSchemas => ({
  async blocksOf(organizationId, schemaId, names) {
    const answer = await bus.request(catalogInternal.getSchemaDataBlocks, { schemaId, organizationId, names });
    return answer.dataBlocks;
  },
});
