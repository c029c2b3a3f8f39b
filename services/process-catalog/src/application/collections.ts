import { badRequest, notFound, type Page } from '@weft/contracts';
import type { Db, EventStore, NewEvent } from '@weft/event-store';
import { WrongExpectedVersionError } from '@weft/event-store';
import { sql } from 'kysely';
import { conflict } from '@weft/contracts';
import { decideCollection, type CollectionCommand } from '../domain/collection/decide.js';
import {
  COLLECTION_EVENT_TYPES,
  collectionStreamId,
  type CollectionEvent,
  type CollectionFields,
  type CollectionKind,
} from '../domain/collection/events.js';
import { evolveCollection, initialCollectionState, type CollectionState } from '../domain/collection/state.js';
import { parseJson } from '../projections/process-projection.js';
import type { Caller, Runtime } from './caller.js';
import { assertOrganizationAccess } from './process-access.js';
import { KeyedSerializer } from './keyed-serializer.js';
import { runStreamCommand, type Decider } from './stream-commands.js';

/** A collection as the API shows it (spec "Collection"). */
export interface CollectionRecord {
  id: string;
  organizationId: string;
  name: string;
  description: string;
  createdBy: string;
  createdById: string;
  parentCollectionId: string | null;
  createdAt: string;
  viewedAt: string | null;
  updatedAt: string;
  revision: number;
}

export interface CollectionWithMembers extends CollectionRecord {
  /** Processes (or schemas) of the collection, by name. */
  members: { id: string; name: string }[];
}

export interface CollectionTreeNode extends CollectionRecord {
  children: CollectionTreeNode[];
}

const decider: Decider<CollectionCommand, CollectionEvent, CollectionState> = {
  initial: initialCollectionState,
  evolve: evolveCollection,
  decide: decideCollection,
  eventTypes: COLLECTION_EVENT_TYPES,
};

/** `lastViewedAt` comes from catalog_collection_views; state.viewedAt only from views recorded as events before. */
const toRecord = (state: CollectionState, revision: number, lastViewedAt: unknown): CollectionRecord => ({
  id: state.id,
  organizationId: state.organizationId,
  name: state.name,
  description: state.description,
  createdBy: state.createdBy,
  createdById: state.createdById,
  parentCollectionId: state.parentCollectionId,
  createdAt: state.createdAt,
  viewedAt: typeof lastViewedAt === 'string' ? lastViewedAt : state.viewedAt,
  updatedAt: state.updatedAt,
  revision,
});

const memberSource = (kind: CollectionKind) =>
  kind === 'process'
    ? ({ members: 'catalog_process_collection_members', column: 'process_id', items: 'catalog_processes' } as const)
    : ({ members: 'catalog_schema_collection_members', column: 'schema_id', items: 'catalog_schemas' } as const);

/**
 * Process collections and schema collections. Deleting a collection removes its memberships and
 * moves its child collections up to its own parent (nothing else is deleted).
 */
export class Collections {
  /** Changes of the tree (create under a parent, move, delete) take turns per organization. */
  private readonly treeChanges = new KeyedSerializer();

  constructor(
    private readonly store: EventStore,
    private readonly db: Db,
    private readonly runtime: Runtime,
  ) {}

  /** Collections with the time they were last read, newer than any view recorded as an event. */
  private withViews() {
    return this.db
      .selectFrom('catalog_collections as c')
      .leftJoin('catalog_collection_views as v', 'v.collection_id', 'c.id')
      .select(['c.state', 'c.revision', 'v.viewed_at']);
  }

  private async row(
    collectionId: string,
  ): Promise<{ state: CollectionState; revision: number; viewedAt: unknown } | undefined> {
    const row = await this.withViews().where('c.id', '=', collectionId).executeTakeFirst();
    return row
      ? { state: parseJson(row.state) as CollectionState, revision: Number(row.revision), viewedAt: row.viewed_at }
      : undefined;
  }

  private visible(state: CollectionState | undefined, kind: CollectionKind, caller: Caller): state is CollectionState {
    return (
      state !== undefined &&
      state.status === 'active' &&
      state.kind === kind &&
      (caller.actor.system || caller.actor.organizationId === state.organizationId)
    );
  }

  private async command(
    kind: CollectionKind,
    collectionId: string,
    command: Omit<CollectionCommand, 'metadata'>,
    caller: Caller,
  ): Promise<void> {
    await runStreamCommand({
      store: this.store,
      runtime: this.runtime,
      streamId: collectionStreamId(collectionId),
      decider,
      caller,
      command,
      authorize: (state) => {
        if (!this.visible(state, kind, caller)) throw notFound('collection not found');
      },
      organizationIdOf: (state) => state.organizationId,
    });
  }

  /** The parent's id and its ancestors, after checking it is a collection of the same kind and organization. */
  private async parentChain(kind: CollectionKind, organizationId: string, parentId: string): Promise<string[]> {
    const chain: string[] = [];
    let current: string | null = parentId;
    while (current && !chain.includes(current)) {
      const found = await this.row(current);
      if (!found || found.state.kind !== kind || found.state.organizationId !== organizationId) {
        if (current === parentId) {
          throw badRequest('unknown parent collection', [
            { path: '/parentCollectionId', message: `no ${kind} collection ${parentId} in this organization` },
          ]);
        }
        break;
      }
      chain.push(current);
      current = found.state.parentCollectionId;
    }
    return chain;
  }

  async create(
    kind: CollectionKind,
    organizationId: string,
    input: { name: string; description?: string; parentCollectionId?: string | null },
    caller: Caller,
  ): Promise<CollectionRecord> {
    assertOrganizationAccess(organizationId, caller);
    const parentCollectionId = input.parentCollectionId ?? null;
    const collectionId = this.runtime.newId();
    await this.treeChanges.run(organizationId, async () => {
      if (parentCollectionId) await this.parentChain(kind, organizationId, parentCollectionId);
      await this.createStream(kind, organizationId, collectionId, { ...input, parentCollectionId }, caller);
    });
    return this.get(kind, collectionId, caller);
  }

  private async createStream(
    kind: CollectionKind,
    organizationId: string,
    collectionId: string,
    input: { name: string; description?: string; parentCollectionId: string | null },
    caller: Caller,
  ): Promise<void> {
    const { parentCollectionId } = input;
    await runStreamCommand({
      store: this.store,
      runtime: this.runtime,
      streamId: collectionStreamId(collectionId),
      decider,
      caller,
      command: {
        type: 'CreateCollection',
        data: {
          collectionId,
          kind,
          organizationId,
          name: input.name,
          description: input.description ?? '',
          parentCollectionId,
        },
      },
      authorize: () => undefined,
      organizationIdOf: () => organizationId,
    });
  }

  async change(
    kind: CollectionKind,
    collectionId: string,
    changes: Partial<CollectionFields>,
    caller: Caller,
  ): Promise<CollectionRecord> {
    const found = await this.row(collectionId);
    if (!this.visible(found?.state, kind, caller)) throw notFound('collection not found');
    const parent = changes.parentCollectionId;
    const change = async (): Promise<void> => {
      const ancestorsOfNewParent = parent ? await this.parentChain(kind, found.state.organizationId, parent) : [];
      await this.command(
        kind,
        collectionId,
        { type: 'ChangeCollection', data: { changes, ancestorsOfNewParent } },
        caller,
      );
    };
    // A rename cannot make a loop; only moves take turns with the other tree changes.
    await (parent === undefined ? change() : this.treeChanges.run(found.state.organizationId, change));
    return this.get(kind, collectionId, caller);
  }

  /** Deletes the collection and moves its children to its parent, in one transaction. */
  async delete(kind: CollectionKind, collectionId: string, caller: Caller): Promise<void> {
    const found = await this.row(collectionId);
    if (!this.visible(found?.state, kind, caller)) throw notFound('collection not found');
    await this.treeChanges.run(found.state.organizationId, async () => {
      // A member change may append to the collection meanwhile; decide again then.
      for (let attempt = 1; ; attempt += 1) {
        try {
          return await this.deleteAndReparent(kind, collectionId, caller);
        } catch (error) {
          if (!(error instanceof WrongExpectedVersionError)) throw error;
          if (attempt >= 5) throw conflict('the collection tree changed meanwhile; retry');
        }
      }
    });
  }

  private async deleteAndReparent(kind: CollectionKind, collectionId: string, caller: Caller): Promise<void> {
    const found = await this.row(collectionId);
    if (!this.visible(found?.state, kind, caller)) throw notFound('collection not found');
    const { state, revision } = found;
    const children = await this.db
      .selectFrom('catalog_collections')
      .select(['id', 'revision'])
      .where('parent_collection_id', '=', collectionId)
      .execute();
    const at = this.runtime.now();
    const metadata = {
      actorId: caller.actor.userId,
      actorName: caller.actor.userName,
      organizationId: state.organizationId,
      ...(caller.correlationId ? { correlationId: caller.correlationId } : {}),
      ...(caller.traceId ? { traceId: caller.traceId } : {}),
    };
    const event = (value: CollectionEvent): NewEvent => ({ ...value, metadata });
    await this.store.appendMany([
      {
        streamId: collectionStreamId(collectionId),
        events: [event({ type: 'CollectionDeleted', data: { at } })],
        expectedVersion: revision,
      },
      ...children.map((child) => ({
        streamId: collectionStreamId(String(child.id)),
        events: [
          event({
            type: 'CollectionChanged',
            data: { changes: { parentCollectionId: state.parentCollectionId }, at },
          }),
        ],
        expectedVersion: Number(child.revision),
      })),
    ]);
  }

  async get(kind: CollectionKind, collectionId: string, caller: Caller): Promise<CollectionRecord> {
    const found = await this.row(collectionId);
    if (!this.visible(found?.state, kind, caller)) throw notFound('collection not found');
    return toRecord(found.state, found.revision, found.viewedAt);
  }

  /**
   * One collection with its members; sets `viewedAt` in the read model only, so a read appends
   * nothing to the event log (docs/decisions/0004). A key restricted to process ids sees only
   * its own processes among the members.
   */
  async view(kind: CollectionKind, collectionId: string, caller: Caller): Promise<CollectionWithMembers> {
    const record = await this.get(kind, collectionId, caller);
    const viewedAt = this.runtime.now();
    // Only while the collection exists, so a view racing its deletion leaves no row behind.
    await sql`
      INSERT INTO catalog_collection_views (collection_id, viewed_at)
      SELECT id, ${viewedAt} FROM catalog_collections WHERE id = ${collectionId}
      ON CONFLICT (collection_id) DO UPDATE SET viewed_at = excluded.viewed_at`.execute(this.db);
    const source = memberSource(kind);
    let members = this.db
      .selectFrom(`${source.members} as m`)
      .innerJoin(`${source.items} as i`, 'i.id', `m.${source.column}`)
      .select(['i.id', 'i.name'])
      .where('m.collection_id', '=', collectionId);
    const { processIds } = caller.actor;
    if (kind === 'process' && processIds) {
      if (processIds.length === 0) members = members.where(sql<boolean>`false`);
      else members = members.where('i.id', 'in', processIds);
    }
    const rows = await members.orderBy('i.name').orderBy('i.id').execute();
    return {
      ...record,
      viewedAt,
      members: rows.map((member) => ({ id: String(member.id), name: String(member.name) })),
    };
  }

  async list(
    kind: CollectionKind,
    organizationId: string,
    page: { page: number; pageSize: number },
    caller: Caller,
  ): Promise<Page<CollectionRecord>> {
    assertOrganizationAccess(organizationId, caller);
    const total = await this.db
      .selectFrom('catalog_collections')
      .where('organization_id', '=', organizationId)
      .where('kind', '=', kind)
      .select((eb) => eb.fn.countAll().as('total'))
      .executeTakeFirstOrThrow();
    const rows = await this.withViews()
      .where('c.organization_id', '=', organizationId)
      .where('c.kind', '=', kind)
      .orderBy('c.name')
      .orderBy('c.id')
      .limit(page.pageSize)
      .offset((page.page - 1) * page.pageSize)
      .execute();
    return {
      items: rows.map((row) => toRecord(parseJson(row.state) as CollectionState, Number(row.revision), row.viewed_at)),
      page: page.page,
      pageSize: page.pageSize,
      total: Number(total.total),
    };
  }

  /** Every collection of the organization as a tree (roots first, children by name). */
  async tree(kind: CollectionKind, organizationId: string, caller: Caller): Promise<CollectionTreeNode[]> {
    assertOrganizationAccess(organizationId, caller);
    const rows = await this.withViews()
      .where('c.organization_id', '=', organizationId)
      .where('c.kind', '=', kind)
      .orderBy('c.name')
      .orderBy('c.id')
      .execute();
    const nodes = new Map<string, CollectionTreeNode>();
    for (const row of rows) {
      const record = toRecord(parseJson(row.state) as CollectionState, Number(row.revision), row.viewed_at);
      nodes.set(record.id, { ...record, children: [] });
    }
    // Follows parents to the top; a chain that loops (which the serialized moves should never
    // leave behind) is cut where it closes, so the answer stays a finite tree showing every collection.
    const reachesTop = (start: CollectionTreeNode): boolean => {
      const seen = new Set<string>();
      let current: CollectionTreeNode | undefined = start;
      while (current) {
        if (seen.has(current.id)) return false;
        seen.add(current.id);
        current = current.parentCollectionId ? nodes.get(current.parentCollectionId) : undefined;
      }
      return true;
    };
    const roots: CollectionTreeNode[] = [];
    for (const node of nodes.values()) {
      const parent = node.parentCollectionId ? nodes.get(node.parentCollectionId) : undefined;
      if (parent && reachesTop(node)) parent.children.push(node);
      else roots.push(node);
    }
    return roots;
  }

  /** Adds a process (or schema) of the same organization; adding it twice changes nothing. */
  async addMember(
    kind: CollectionKind,
    collectionId: string,
    memberId: string,
    caller: Caller,
  ): Promise<CollectionRecord> {
    const collection = await this.get(kind, collectionId, caller);
    const source = memberSource(kind);
    const member = await this.db
      .selectFrom(source.items)
      .select('organization_id')
      .where('id', '=', memberId)
      .executeTakeFirst();
    if (!member || String(member.organization_id) !== collection.organizationId) throw notFound(`${kind} not found`);
    if (kind === 'process' && caller.actor.processIds && !caller.actor.processIds.includes(memberId)) {
      throw notFound('process not found');
    }
    await this.command(kind, collectionId, { type: 'AddCollectionMember', data: { memberId } }, caller);
    return this.get(kind, collectionId, caller);
  }

  async removeMember(
    kind: CollectionKind,
    collectionId: string,
    memberId: string,
    caller: Caller,
  ): Promise<CollectionRecord> {
    await this.command(kind, collectionId, { type: 'RemoveCollectionMember', data: { memberId } }, caller);
    return this.get(kind, collectionId, caller);
  }
}
