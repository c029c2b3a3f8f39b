import type { ApiKeyView, OrganizationView } from '@weft/contracts';
import type { Actor } from '@weft/bus';
import type { Db } from '@weft/event-store';

const iso = (value: unknown): string => (value instanceof Date ? value : new Date(String(value))).toISOString();

const parseIds = (value: unknown): string[] | null => {
  if (value === null || value === undefined) return null;
  return (typeof value === 'string' ? JSON.parse(value) : value) as string[];
};

/* eslint-disable @typescript-eslint/no-explicit-any */
const toKeyView = (row: any): ApiKeyView => ({
  id: row.id,
  organizationId: row.organization_id,
  name: row.name,
  userName: row.user_name,
  userId: row.user_id,
  processIds: parseIds(row.process_ids),
  system: row.system,
  keyPrefix: row.key_prefix,
  createdAt: iso(row.created_at),
});
/* eslint-enable @typescript-eslint/no-explicit-any */

/** Queries over the gateway's projected tables; nothing here reads the event log. */
export class GatewayReadModels {
  constructor(private readonly db: Db) {}

  async actorForKeyHash(keyHash: string): Promise<Actor | undefined> {
    const row = await this.db
      .selectFrom('gateway_api_keys')
      .selectAll()
      .where('key_hash', '=', keyHash)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    if (!row) return undefined;
    const processIds = parseIds(row.process_ids);
    return {
      organizationId: row.organization_id,
      userId: row.user_id,
      userName: row.user_name,
      apiKeyId: row.id,
      system: row.system,
      ...(processIds ? { processIds } : {}),
    };
  }

  async organization(id: string): Promise<OrganizationView | undefined> {
    const row = await this.db.selectFrom('gateway_organizations').selectAll().where('id', '=', id).executeTakeFirst();
    return row
      ? {
          id: row.id,
          name: row.name,
          createdBy: row.created_by,
          createdById: row.created_by_id,
          createdAt: iso(row.created_at),
        }
      : undefined;
  }

  async apiKey(id: string): Promise<ApiKeyView | undefined> {
    const row = await this.db.selectFrom('gateway_api_keys').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toKeyView(row) : undefined;
  }

  async activeApiKeys(organizationId: string, page: number, pageSize: number) {
    const base = this.db
      .selectFrom('gateway_api_keys')
      .where('organization_id', '=', organizationId)
      .where('revoked_at', 'is', null);
    const [rows, count] = await Promise.all([
      base
        .selectAll()
        .orderBy('created_at', 'desc')
        .orderBy('id')
        .limit(pageSize)
        .offset((page - 1) * pageSize)
        .execute(),
      base.select((eb) => eb.fn.countAll().as('total')).executeTakeFirstOrThrow(),
    ]);
    return { items: rows.map(toKeyView), page, pageSize, total: Number(count.total) };
  }

  async hasActiveSystemKey(): Promise<boolean> {
    const row = await this.db
      .selectFrom('gateway_api_keys')
      .select('id')
      .where('system', '=', true)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return row !== undefined;
  }
}
