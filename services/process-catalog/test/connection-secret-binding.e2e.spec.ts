import { catalogInternal } from '@weft/contracts';
import { SecretBox } from '../src/application/secret-box.js';
import { parseJson } from '../src/projections/process-projection.js';
import {
  SECRET_KEY,
  setups,
  startGatewayWithCatalog,
  type GatewayWithCatalog,
} from './fixtures/gateway-with-catalog.js';

/**
 * A connection's secret is sealed with `${organizationId}:${connectionId}` as AES-GCM additional
 * data: a ciphertext copied into another record (another organization's, or another connection of
 * the same one) does not open. Secrets stored before the binding still open.
 */
describe.each(setups)('connection secrets bound to their owner ($bus bus, $db)', (setup) => {
  let weft: GatewayWithCatalog;

  const connect = async (org: { id: string; key: string }, name: string, data: Record<string, unknown>) => {
    const created = await weft.http('POST', `/api/v1/connections/by-org/${org.id}`, org.key, {
      type: 'postgres',
      name,
      data,
    });
    expect(created.status).toBe(201);
    return created.body.id as string;
  };
  const secretOf = (connectionId: string, organizationId: string) =>
    weft.bus.request(catalogInternal.getConnectionSecret, { connectionId, organizationId });
  const sealedOf = async (connectionId: string): Promise<unknown> => {
    const row = await weft.database.db
      .selectFrom('catalog_connections')
      .select('sealed_data')
      .where('id', '=', connectionId)
      .executeTakeFirstOrThrow();
    return parseJson(row.sealed_data);
  };
  const storeSealed = (connectionId: string, sealed: unknown) =>
    weft.database.db
      .updateTable('catalog_connections')
      .set({ sealed_data: JSON.stringify(sealed) })
      .where('id', '=', connectionId)
      .execute();

  beforeAll(async () => {
    weft = await startGatewayWithCatalog(setup);
  });

  afterAll(() => weft.stop());

  test('a secret opens for its own connection, and a copy of it opens nowhere else', async () => {
    const acme = await weft.organization('Acme');
    const globex = await weft.organization('Globex');
    const acmeDb = await connect(acme, 'acme db', { password: 'acme-password' });
    const acmeOther = await connect(acme, 'acme other', { password: 'other-password' });
    const globexDb = await connect(globex, 'globex db', { password: 'globex-password' });

    expect((await secretOf(acmeDb, acme.id)).data).toEqual({ password: 'acme-password' });
    const sealed = await sealedOf(acmeDb);
    expect(sealed).toMatchObject({ algorithm: 'aes-256-gcm', boundTo: 'organization:connection' });

    // Copied into another organization's connection, or another connection of the same organization.
    await storeSealed(globexDb, sealed);
    await storeSealed(acmeOther, sealed);
    await expect(secretOf(globexDb, globex.id)).rejects.toMatchObject({ problem: { status: 409 } });
    await expect(secretOf(acmeOther, acme.id)).rejects.toMatchObject({ problem: { status: 409 } });
    // Dropping the marker does not help: the tag was computed with the owner.
    const { boundTo: _dropped, ...unmarked } = sealed as Record<string, unknown>;
    await storeSealed(globexDb, unmarked);
    await expect(secretOf(globexDb, globex.id)).rejects.toMatchObject({ problem: { status: 409 } });
    // The original still opens.
    expect((await secretOf(acmeDb, acme.id)).data).toEqual({ password: 'acme-password' });
  });

  test('a secret stored before the binding (no marker, no additional data) still opens', async () => {
    const acme = await weft.organization('Legacy');
    const connectionId = await connect(acme, 'old', { password: 'replaced below' });
    const legacy = new SecretBox(SECRET_KEY).seal({ password: 'from-an-old-release' });
    expect(legacy).not.toHaveProperty('boundTo');
    await storeSealed(connectionId, legacy);
    expect((await secretOf(connectionId, acme.id)).data).toEqual({ password: 'from-an-old-release' });
  });
});
