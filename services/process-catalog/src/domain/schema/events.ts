/** A named JSON Schema inside a schema; input and schematization nodes point at these. */
export interface DataBlock {
  id: string;
  name: string;
  description: string;
  jsonSchema: Record<string, unknown>;
}

export interface SchemaContent {
  name: string;
  description: string;
  dataBlocks: DataBlock[];
}

/** Events of a schema stream (`schema-<id>`). */
export type SchemaEvent =
  | {
      type: 'SchemaCreated';
      data: SchemaContent & {
        schemaId: string;
        organizationId: string;
        createdBy: string;
        createdById: string;
        /** Set when an import created it from a schema dependency. */
        importedFrom?: string;
        at: string;
      };
    }
  | { type: 'SchemaChanged'; data: { changes: Partial<SchemaContent>; at: string } }
  | { type: 'SchemaDeleted'; data: { at: string } };

export const SCHEMA_EVENT_TYPES: readonly SchemaEvent['type'][] = ['SchemaCreated', 'SchemaChanged', 'SchemaDeleted'];

export const schemaStreamId = (schemaId: string): string => `schema-${schemaId}`;
