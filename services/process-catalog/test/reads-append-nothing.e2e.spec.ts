import { setups, startGatewayWithCatalog, type GatewayWithCatalog } from './fixtures/gateway-with-catalog.js';

/**
 * A GET never appends to the event log. Reading a collection still sets its `viewedAt` (the spec:
 * "last viewed"), in the read model only (docs/decisions/0004).
 */
describe.each(setups)('reads append nothing ($bus bus, $db)', (setup) => {
  let weft: GatewayWithCatalog;

  beforeAll(async () => {
    weft = await startGatewayWithCatalog(setup);
  });

  afterAll(() => weft.stop());

  test('every GET of the catalog and the gateway leaves the event log as it was', async () => {
    const org = await weft.organization('Readers');
    const { http } = weft;
    const process = await http('POST', `/api/v1/processes/by-org/${org.id}`, org.key, { name: 'P' });
    const version = await http('POST', `/api/v1/processes/versions/${process.body.id}`, org.key, { label: 'v1' });
    const schema = await http('POST', `/api/v1/schemas/by-org/${org.id}`, org.key, { name: 'S', dataBlocks: [] });
    const connection = await http('POST', `/api/v1/connections/by-org/${org.id}`, org.key, {
      type: 'http',
      name: 'C',
      data: { token: 't' },
    });
    const processCollection = await http('POST', `/api/v1/process-collections/by-org/${org.id}`, org.key, {
      name: 'PC',
    });
    await http(
      'POST',
      `/api/v1/process-collections/${processCollection.body.id}/add-process/${process.body.id}`,
      org.key,
    );
    const schemaCollection = await http('POST', `/api/v1/schema-collections/by-org/${org.id}`, org.key, { name: 'SC' });
    for (const created of [process, version, schema, connection, processCollection, schemaCollection]) {
      expect(created.status).toBe(201);
    }
    const reads = [
      `/api/v1/organizations/${org.id}`,
      `/api/v1/api-keys/by-org/${org.id}`,
      `/api/v1/processes/by-org/${org.id}`,
      `/api/v1/processes/by-id/${process.body.id}`,
      `/api/v1/processes/${process.body.id}/history`,
      `/api/v1/processes/${process.body.id}/export`,
      `/api/v1/processes/versions/${process.body.id}`,
      `/api/v1/processes/version/${version.body.id}`,
      `/api/v1/schemas/by-org/${org.id}`,
      `/api/v1/schemas/by-id/${schema.body.id}`,
      `/api/v1/connections/by-org/${org.id}`,
      `/api/v1/connections/by-id/${connection.body.id}`,
      `/api/v1/process-collections/by-org/${org.id}`,
      `/api/v1/process-collections/by-org/${org.id}?tree=true`,
      `/api/v1/process-collections/by-id/${processCollection.body.id}`,
      `/api/v1/schema-collections/by-org/${org.id}`,
      `/api/v1/schema-collections/by-org/${org.id}?tree=true`,
      `/api/v1/schema-collections/by-id/${schemaCollection.body.id}`,
    ];
    const before = await weft.lastPosition();
    for (const path of reads) {
      const answer = await http('GET', path, org.key);
      expect({ path, status: answer.status }).toEqual({ path, status: 200 });
    }
    expect(await weft.store.readAll({ fromPosition: before })).toEqual([]);
  });

  test('reading a collection sets its viewedAt, which its later reads and the list show', async () => {
    const org = await weft.organization('Viewers');
    const created = await weft.http('POST', `/api/v1/schema-collections/by-org/${org.id}`, org.key, { name: 'Docs' });
    expect(created.body.viewedAt).toBeNull();
    const before = await weft.lastPosition();
    const viewed = await weft.http('GET', `/api/v1/schema-collections/by-id/${created.body.id}`, org.key);
    expect(viewed.status).toBe(200);
    expect(typeof viewed.body.viewedAt).toBe('string');
    expect(Number.isNaN(Date.parse(viewed.body.viewedAt))).toBe(false);
    const listed = await weft.http('GET', `/api/v1/schema-collections/by-org/${org.id}`, org.key);
    expect(listed.body.items).toEqual([
      expect.objectContaining({ id: created.body.id, viewedAt: viewed.body.viewedAt }),
    ]);
    const again = await weft.http('GET', `/api/v1/schema-collections/by-id/${created.body.id}`, org.key);
    expect(Date.parse(again.body.viewedAt)).toBeGreaterThanOrEqual(Date.parse(viewed.body.viewedAt));
    // Neither view became an event, and the collection's revision did not move.
    expect(await weft.store.readAll({ fromPosition: before })).toEqual([]);
    expect(again.body.revision).toBe(created.body.revision);
  });
});
