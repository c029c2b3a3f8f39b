import { catalogInternal, ProblemError } from '@weft/contracts';
import { setups, startGatewayWithCatalog, type GatewayWithCatalog } from './fixtures/gateway-with-catalog.js';

/**
 * What the trigger service asks the catalog over the bus: the running processes (to restore its
 * listeners), a data block's JSON schema (webhook validation), and new secret data for a connection
 * (a refreshed OAuth token), which is stored sealed and never appears in clear text in an event.
 */
describe.each(setups)('catalog subjects for the trigger service ($bus bus, $db)', (setup) => {
  let weft: GatewayWithCatalog;

  beforeAll(async () => {
    weft = await startGatewayWithCatalog(setup);
  });
  afterAll(() => weft.stop());

  test('a refreshed token replaces the connection data, sealed, for its own organization only', async () => {
    const acme = await weft.organization('Acme');
    const globex = await weft.organization('Globex');
    const created = await weft.http('POST', `/api/v1/connections/by-org/${acme.id}`, acme.key, {
      type: 'gmail-oauth',
      name: 'inbox',
      data: { accessToken: 'old-access-token', refreshToken: 'refresh-token' },
    });
    expect(created.status).toBe(201);
    const connectionId = created.body.id as string;
    const replaced = { accessToken: 'new-access-token-4711', refreshToken: 'refresh-token', expiresAt: 1 };
    await weft.bus.request(catalogInternal.replaceConnectionData, {
      connectionId,
      organizationId: acme.id,
      data: replaced,
    });
    const secret = await weft.bus.request(catalogInternal.getConnectionSecret, {
      connectionId,
      organizationId: acme.id,
    });
    expect(secret.data).toEqual(replaced);
    const events = await weft.store.readStream(`connection-${connectionId}`);
    expect(events.map((event) => event.type)).toEqual(['ConnectionCreated', 'ConnectionDataReplaced']);
    expect(JSON.stringify(events)).not.toContain('new-access-token-4711');

    const foreign = weft.bus.request(catalogInternal.replaceConnectionData, {
      connectionId,
      organizationId: globex.id,
      data: { accessToken: 'stolen' },
    });
    await expect(foreign).rejects.toMatchObject({ status: 404 });
    expect(
      (await weft.bus.request(catalogInternal.getConnectionSecret, { connectionId, organizationId: acme.id })).data,
    ).toEqual(replaced);
  });

  test('running processes are listed with their revision; a data block schema is served to its organization only', async () => {
    const acme = await weft.organization('Acme2');
    const other = await weft.organization('Other');
    const schema = await weft.http('POST', `/api/v1/schemas/by-org/${acme.id}`, acme.key, {
      name: 'Order',
      dataBlocks: [{ name: 'order', jsonSchema: { type: 'object', required: ['sku'] } }],
    });
    expect(schema.status).toBe(201);
    const blockId = schema.body.dataBlocks[0].id as string;
    const block = await weft.bus.request(catalogInternal.getDataBlockSchema, {
      schemaId: schema.body.id,
      dataBlockId: blockId,
      organizationId: acme.id,
    });
    expect(block.jsonSchema).toEqual({ type: 'object', required: ['sku'] });
    await expect(
      weft.bus.request(catalogInternal.getDataBlockSchema, {
        schemaId: schema.body.id,
        dataBlockId: blockId,
        organizationId: other.id,
      }),
    ).rejects.toBeInstanceOf(ProblemError);

    const created = await weft.http('POST', `/api/v1/processes/by-org/${acme.id}`, acme.key, {
      name: 'Hook',
      nodes: [
        { id: 'in', type: 'inputNode', config: { label: 'In', triggerType: 'webhook' } },
        { id: 'out', type: 'outputNode', config: { label: 'Out' } },
      ],
      edges: [{ source_node_id: 'in', target_node_id: 'out' }],
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    const listed = async () => (await weft.bus.request(catalogInternal.listRunningProcesses, {})).processes;
    expect((await listed()).map((entry) => entry.processId)).not.toContain(id);
    expect((await weft.http('POST', `/api/v1/processes/start/${id}`, acme.key)).status).toBe(200);
    expect(await listed()).toContainEqual({ processId: id, organizationId: acme.id, revision: expect.any(Number) });
    expect((await weft.http('POST', `/api/v1/processes/stop/${id}`, acme.key)).status).toBe(200);
    expect((await listed()).map((entry) => entry.processId)).not.toContain(id);
  });
});
