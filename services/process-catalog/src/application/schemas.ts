import { notFound, schemaCompileError, type Page } from '@weft/contracts';
import type { Db, EventStore } from '@weft/event-store';
import { sql } from 'kysely';
import type { KnownSchema } from '../domain/lint/lint-finding.js';
import { decideSchema, type SchemaCommand } from '../domain/schema/decide.js';
import {
  SCHEMA_EVENT_TYPES,
  schemaStreamId,
  type DataBlock,
  type SchemaContent,
  type SchemaEvent,
} from '../domain/schema/events.js';
import { evolveSchema, initialSchemaState, type SchemaState } from '../domain/schema/state.js';
import { isUuid } from '../domain/shared/uuid.js';
import { parseJson } from '../projections/process-projection.js';
import type { Caller, Runtime } from './caller.js';
import type { KnownSchemaSource } from './known-schemas.js';
import { assertOrganizationAccess } from './process-access.js';
import { runStreamCommand, type Decider } from './stream-commands.js';

/** The schema record the API answers (camelCase, like import documents). */
export interface SchemaRecord extends SchemaContent {
  id: string;
  organizationId: string;
  createdBy: string;
  createdById: string;
  createdAt: string;
  updatedAt: string;
  revision: number;
}

export interface DataBlockInput {
  id?: string;
  name: string;
  description?: string;
  jsonSchema: Record<string, unknown>;
}

export const schemaDecider: Decider<SchemaCommand, SchemaEvent, SchemaState> = {
  initial: initialSchemaState,
  evolve: evolveSchema,
  decide: decideSchema,
  eventTypes: SCHEMA_EVENT_TYPES,
};

/** What ajv says about each block's JSON Schema; only failures are listed. */
export const compileErrorsOf = (blocks: readonly { jsonSchema: unknown }[]): Record<number, string> =>
  Object.fromEntries(
    blocks.flatMap((block, index) => {
      const error = schemaCompileError(block.jsonSchema);
      return error === undefined ? [] : [[index, error] as const];
    }),
  );

const toRecord = (state: SchemaState, revision: number): SchemaRecord => ({
  id: state.id,
  organizationId: state.organizationId,
  name: state.name,
  description: state.description,
  dataBlocks: state.dataBlocks,
  createdBy: state.createdBy,
  createdById: state.createdById,
  createdAt: state.createdAt,
  updatedAt: state.updatedAt,
  revision,
});

const visibleTo = (organizationId: string, caller: Caller): boolean =>
  caller.actor.system || caller.actor.organizationId === organizationId;

export class Schemas implements KnownSchemaSource {
  constructor(
    private readonly store: EventStore,
    private readonly db: Db,
    private readonly runtime: Runtime,
  ) {}

  /** Blocks keep a given UUID id; others get a new one. */
  dataBlocksFrom(inputs: readonly DataBlockInput[]): DataBlock[] {
    return inputs.map((input) => ({
      id: input.id !== undefined && isUuid(input.id) ? input.id : this.runtime.newId(),
      name: input.name,
      description: input.description ?? '',
      jsonSchema: input.jsonSchema,
    }));
  }

  async create(
    organizationId: string,
    input: { name: string; description?: string; dataBlocks?: DataBlockInput[] },
    caller: Caller,
  ): Promise<SchemaRecord> {
    assertOrganizationAccess(organizationId, caller);
    const schemaId = this.runtime.newId();
    const dataBlocks = this.dataBlocksFrom(input.dataBlocks ?? []);
    await runStreamCommand({
      store: this.store,
      runtime: this.runtime,
      streamId: schemaStreamId(schemaId),
      decider: schemaDecider,
      caller,
      command: {
        type: 'CreateSchema',
        data: {
          schemaId,
          organizationId,
          name: input.name,
          description: input.description ?? '',
          dataBlocks,
          jsonSchemaErrors: compileErrorsOf(dataBlocks),
        },
      },
      authorize: () => undefined,
      organizationIdOf: () => organizationId,
    });
    return this.get(schemaId, caller);
  }

  async change(
    schemaId: string,
    input: { name?: string; description?: string; dataBlocks?: DataBlockInput[] },
    caller: Caller,
  ): Promise<SchemaRecord> {
    const dataBlocks = input.dataBlocks ? this.dataBlocksFrom(input.dataBlocks) : undefined;
    await runStreamCommand({
      store: this.store,
      runtime: this.runtime,
      streamId: schemaStreamId(schemaId),
      decider: schemaDecider,
      caller,
      command: {
        type: 'ChangeSchema',
        data: {
          changes: {
            ...(input.name === undefined ? {} : { name: input.name }),
            ...(input.description === undefined ? {} : { description: input.description }),
            ...(dataBlocks ? { dataBlocks } : {}),
          },
          jsonSchemaErrors: dataBlocks ? compileErrorsOf(dataBlocks) : {},
        },
      },
      authorize: (state) => this.authorize(state, caller),
      organizationIdOf: (state) => state.organizationId,
    });
    return this.get(schemaId, caller);
  }

  async delete(schemaId: string, caller: Caller): Promise<void> {
    await runStreamCommand({
      store: this.store,
      runtime: this.runtime,
      streamId: schemaStreamId(schemaId),
      decider: schemaDecider,
      caller,
      command: { type: 'DeleteSchema', data: {} },
      authorize: (state) => this.authorize(state, caller),
      organizationIdOf: (state) => state.organizationId,
    });
  }

  private authorize(state: SchemaState, caller: Caller): void {
    if (state.status !== 'active' || !visibleTo(state.organizationId, caller)) throw notFound('schema not found');
  }

  /** A schema by id regardless of caller (import and export check organizations themselves). */
  async find(schemaId: string): Promise<SchemaRecord | undefined> {
    const row = await this.db
      .selectFrom('catalog_schemas')
      .select(['state', 'revision'])
      .where('id', '=', schemaId)
      .executeTakeFirst();
    return row ? toRecord(parseJson(row.state) as SchemaState, Number(row.revision)) : undefined;
  }

  /** Schemas an earlier import into `organizationId` created from dependency `sourceSchemaId`, oldest first. */
  async importedCopies(organizationId: string, sourceSchemaId: string): Promise<SchemaRecord[]> {
    const rows = await this.db
      .selectFrom('catalog_schemas')
      .select(['state', 'revision'])
      .where('organization_id', '=', organizationId)
      .where(sql<string>`state->>'importedFrom'`, '=', sourceSchemaId)
      .orderBy('id')
      .execute();
    return rows
      .map((row) => toRecord(parseJson(row.state) as SchemaState, Number(row.revision)))
      .sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  async get(schemaId: string, caller: Caller): Promise<SchemaRecord> {
    const found = await this.find(schemaId);
    if (!found || !visibleTo(found.organizationId, caller)) throw notFound('schema not found');
    return found;
  }

  async list(
    organizationId: string,
    filter: { search?: string; collectionId?: string },
    page: { page: number; pageSize: number },
    caller: Caller,
  ): Promise<Page<SchemaRecord>> {
    assertOrganizationAccess(organizationId, caller);
    let query = this.db.selectFrom('catalog_schemas as s').where('s.organization_id', '=', organizationId);
    if (filter.search) {
      const pattern = `%${filter.search.replace(/[\\%_]/g, (char) => `\\${char}`)}%`;
      query = query.where(sql<boolean>`s.name ILIKE ${pattern}`);
    }
    if (filter.collectionId) {
      const collectionId = filter.collectionId;
      query = query.where((eb) =>
        eb.exists(
          eb
            .selectFrom('catalog_schema_collection_members as m')
            .select('m.schema_id')
            .whereRef('m.schema_id', '=', 's.id')
            .where('m.collection_id', '=', collectionId),
        ),
      );
    }
    const total = await query.select((eb) => eb.fn.countAll().as('total')).executeTakeFirstOrThrow();
    const rows = await query
      .select(['s.state', 's.revision'])
      .orderBy('s.name')
      .orderBy('s.id')
      .limit(page.pageSize)
      .offset((page.page - 1) * page.pageSize)
      .execute();
    return {
      items: rows.map((row) => toRecord(parseJson(row.state) as SchemaState, Number(row.revision))),
      page: page.page,
      pageSize: page.pageSize,
      total: Number(total.total),
    };
  }

  async schemasOf(organizationId: string): Promise<KnownSchema[]> {
    const rows = await this.db
      .selectFrom('catalog_schemas')
      .select('state')
      .where('organization_id', '=', organizationId)
      .execute();
    return rows.map((row) => {
      const state = parseJson(row.state) as SchemaState;
      return { id: state.id, dataBlocks: state.dataBlocks.map((block) => ({ id: block.id, name: block.name })) };
    });
  }
}
