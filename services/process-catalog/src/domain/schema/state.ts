import type { DataBlock, SchemaEvent } from './events.js';

export interface SchemaState {
  status: 'new' | 'active' | 'deleted';
  id: string;
  organizationId: string;
  name: string;
  description: string;
  dataBlocks: DataBlock[];
  createdBy: string;
  createdById: string;
  createdAt: string;
  updatedAt: string;
  /** The schema id of the dependency an import created this schema from. */
  importedFrom?: string;
}

export const initialSchemaState = (): SchemaState => ({
  status: 'new',
  id: '',
  organizationId: '',
  name: '',
  description: '',
  dataBlocks: [],
  createdBy: '',
  createdById: '',
  createdAt: '',
  updatedAt: '',
});

export function evolveSchema(state: SchemaState, event: SchemaEvent): SchemaState {
  switch (event.type) {
    case 'SchemaCreated':
      return {
        status: 'active',
        id: event.data.schemaId,
        organizationId: event.data.organizationId,
        name: event.data.name,
        description: event.data.description,
        dataBlocks: event.data.dataBlocks,
        createdBy: event.data.createdBy,
        createdById: event.data.createdById,
        createdAt: event.data.at,
        updatedAt: event.data.at,
        ...(event.data.importedFrom ? { importedFrom: event.data.importedFrom } : {}),
      };
    case 'SchemaChanged':
      return { ...state, ...event.data.changes, updatedAt: event.data.at };
    case 'SchemaDeleted':
      return { ...state, status: 'deleted', updatedAt: event.data.at };
    default: {
      const unknownEvent: never = event;
      return unknownEvent;
    }
  }
}
