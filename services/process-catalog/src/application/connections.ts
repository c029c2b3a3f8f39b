import { conflict, notFound, type DecryptedConnection, type Page } from '@weft/contracts';
import type { Db, EventStore } from '@weft/event-store';
import { decideConnection, type ConnectionCommand } from '../domain/connection/decide.js';
import {
  CONNECTION_EVENT_TYPES,
  connectionStreamId,
  type ConnectionEvent,
  type SealedSecret,
} from '../domain/connection/events.js';
import { evolveConnection, initialConnectionState, type ConnectionState } from '../domain/connection/state.js';
import { parseJson } from '../projections/process-projection.js';
import type { Caller, Runtime } from './caller.js';
import { assertOrganizationAccess, assertUnrestricted } from './process-access.js';
import type { SecretBox } from './secret-box.js';
import { runStreamCommand, type Decider } from './stream-commands.js';

/** A connection as read endpoints show it: never its secret data. */
export interface ConnectionSummary {
  id: string;
  organizationId: string;
  type: string;
  name: string;
  createdBy: string;
  createdById: string;
  createdAt: string;
}

const decider: Decider<ConnectionCommand, ConnectionEvent, ConnectionState> = {
  initial: initialConnectionState,
  evolve: evolveConnection,
  decide: decideConnection,
  eventTypes: CONNECTION_EVENT_TYPES,
};

const visibleTo = (organizationId: string, caller: Caller): boolean =>
  caller.actor.system || caller.actor.organizationId === organizationId;

export class Connections {
  constructor(
    private readonly store: EventStore,
    private readonly db: Db,
    private readonly runtime: Runtime,
    private readonly secrets: SecretBox,
  ) {}

  async create(
    organizationId: string,
    input: { type: string; name: string; data: Record<string, unknown> },
    caller: Caller,
  ): Promise<ConnectionSummary> {
    assertUnrestricted(caller);
    assertOrganizationAccess(organizationId, caller);
    const connectionId = this.runtime.newId();
    await this.command(
      connectionId,
      caller,
      {
        type: 'CreateConnection',
        data: {
          connectionId,
          organizationId,
          connectionType: input.type,
          name: input.name,
          sealedData: this.secrets.seal(input.data, { organizationId, connectionId }),
        },
      },
      () => undefined,
    );
    return this.get(connectionId, caller);
  }

  async delete(connectionId: string, caller: Caller): Promise<void> {
    assertUnrestricted(caller);
    await this.onActiveConnection(connectionId, caller, { type: 'DeleteConnection', data: {} }, (organizationId) =>
      visibleTo(organizationId, caller),
    );
  }

  async get(connectionId: string, caller: Caller): Promise<ConnectionSummary> {
    assertUnrestricted(caller);
    const row = await this.db
      .selectFrom('catalog_connections')
      .selectAll()
      .where('id', '=', connectionId)
      .executeTakeFirst();
    if (!row || !visibleTo(String(row.organization_id), caller)) throw notFound('connection not found');
    return summary(row);
  }

  async list(
    organizationId: string,
    page: { page: number; pageSize: number },
    caller: Caller,
  ): Promise<Page<ConnectionSummary>> {
    assertUnrestricted(caller);
    assertOrganizationAccess(organizationId, caller);
    const base = this.db.selectFrom('catalog_connections').where('organization_id', '=', organizationId);
    const total = await base.select((eb) => eb.fn.countAll().as('total')).executeTakeFirstOrThrow();
    const rows = await base
      .selectAll()
      .orderBy('name')
      .orderBy('id')
      .limit(page.pageSize)
      .offset((page.page - 1) * page.pageSize)
      .execute();
    return { items: rows.map(summary), page: page.page, pageSize: page.pageSize, total: Number(total.total) };
  }

  /** Id and type of every connection of an organization (lint checks the ones input nodes name). */
  async typesOf(organizationId: string): Promise<{ id: string; type: string }[]> {
    const rows = await this.db
      .selectFrom('catalog_connections')
      .select(['id', 'type'])
      .where('organization_id', '=', organizationId)
      .execute();
    return rows.map((row) => ({ id: String(row.id), type: String(row.type) }));
  }

  /** For the internal bus subject only (trigger service): new secret data of a connection, e.g. a refreshed OAuth token. */
  async replaceData(
    connectionId: string,
    organizationId: string,
    data: Record<string, unknown>,
    caller: Caller,
  ): Promise<void> {
    await this.onActiveConnection(
      connectionId,
      caller,
      {
        type: 'ReplaceConnectionData',
        data: { sealedData: this.secrets.seal(data, { organizationId, connectionId }) },
      },
      (owner) => owner === organizationId,
    );
  }

  /** Runs a command on an active connection whose organization `owns` accepts; any other is a 404, never disclosed. */
  private async onActiveConnection(
    connectionId: string,
    caller: Caller,
    command: Omit<ConnectionCommand, 'metadata'>,
    owns: (organizationId: string) => boolean,
  ): Promise<void> {
    await this.command(connectionId, caller, command, (state) => {
      if (state.status !== 'active' || !owns(state.organizationId)) throw notFound('connection not found');
    });
  }

  /** A command on the connection's stream; `authorize` sees the state before it (and throws to refuse). */
  private async command(
    connectionId: string,
    caller: Caller,
    command: Omit<ConnectionCommand, 'metadata'>,
    authorize: (state: ConnectionState) => void,
  ): Promise<void> {
    await runStreamCommand({
      store: this.store,
      runtime: this.runtime,
      streamId: connectionStreamId(connectionId),
      decider,
      caller,
      command,
      authorize,
      // A created connection's organization is in its first event, so the state after it names it.
      organizationIdOf: (state) => state.organizationId,
    });
  }

  /** For the internal bus subject only: the clear-text data of one organization's connection. */
  async decrypted(connectionId: string, organizationId: string): Promise<DecryptedConnection> {
    const row = await this.db
      .selectFrom('catalog_connections')
      .selectAll()
      .where('id', '=', connectionId)
      .executeTakeFirst();
    if (!row || String(row.organization_id) !== organizationId) throw notFound('connection not found');
    let data: Record<string, unknown>;
    try {
      data = this.secrets.open(parseJson(row.sealed_data) as SealedSecret, { organizationId, connectionId });
    } catch {
      // Sealed for another connection (copied) or under another master key: a clear refusal, no crypto detail.
      throw conflict(`the stored secret of connection ${connectionId} was not sealed for it and cannot be opened`);
    }
    return {
      id: String(row.id),
      organizationId: String(row.organization_id),
      type: String(row.type) as DecryptedConnection['type'],
      name: String(row.name),
      data,
    };
  }
}

const summary = (row: Record<string, unknown>): ConnectionSummary => ({
  id: String(row.id),
  organizationId: String(row.organization_id),
  type: String(row.type),
  name: String(row.name),
  createdBy: String(row.created_by),
  createdById: String(row.created_by_id),
  createdAt: String(row.created_at),
});
