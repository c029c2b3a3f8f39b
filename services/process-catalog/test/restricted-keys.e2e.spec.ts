import { randomUUID } from 'node:crypto';
import { setups, startGatewayWithCatalog, type GatewayWithCatalog } from './fixtures/gateway-with-catalog.js';

/**
 * Keys restricted to process ids, over HTTP with real keys: they manage no keys and no
 * connections, see only their own processes, and cannot point their processes at connections
 * they were never given.
 */
describe.each(setups)('keys restricted to process ids ($bus bus, $db)', (setup) => {
  let weft: GatewayWithCatalog;
  let org: { id: string; key: string };
  let mine: string;
  let other: string;
  let restricted: string;
  let connectionId: string;

  const createProcess = async (name: string, nodes: unknown[] = []): Promise<string> => {
    const created = await weft.http('POST', `/api/v1/processes/by-org/${org.id}`, org.key, { name, nodes });
    expect(created.status).toBe(201);
    return created.body.id as string;
  };

  beforeAll(async () => {
    weft = await startGatewayWithCatalog(setup);
    org = await weft.organization('Acme');
    const connection = await weft.http('POST', `/api/v1/connections/by-org/${org.id}`, org.key, {
      type: 'postgres',
      name: 'warehouse',
      data: { url: 'postgres://u:secret@127.0.0.1/db' },
    });
    expect(connection.status).toBe(201);
    connectionId = connection.body.id as string;
    mine = await createProcess('Mine', [
      {
        id: 'q',
        type: 'sqlNode',
        position: { x: 0, y: 0 },
        config: { label: 'Query', connectionId, query: 'select 1' },
      },
    ]);
    other = await createProcess('Secret plans of another team');
    restricted = await weft.restrictedKey(org.id, [mine]);
  });

  afterAll(() => weft.stop());

  test('an empty processIds list is a 400 and issues no key', async () => {
    const before = await weft.http('GET', `/api/v1/api-keys/by-org/${org.id}`, org.key);
    const answer = await weft.http('POST', `/api/v1/api-keys/by-org/${org.id}`, org.key, {
      name: 'nothing',
      userName: 'Nobody',
      userId: randomUUID(),
      processIds: [],
    });
    expect(answer.status).toBe(400);
    expect(answer.headers['content-type']).toContain('application/problem+json');
    expect(answer.body.errors).toEqual([expect.objectContaining({ path: '/processIds' })]);
    const after = await weft.http('GET', `/api/v1/api-keys/by-org/${org.id}`, org.key);
    expect(after.body.total).toBe(before.body.total);
  });

  test('a restricted key cannot issue, list or revoke keys', async () => {
    const before = await weft.http('GET', `/api/v1/api-keys/by-org/${org.id}`, org.key);
    const issue = await weft.http('POST', `/api/v1/api-keys/by-org/${org.id}`, restricted, {
      name: 'escalated',
      userName: 'Mallory',
      userId: randomUUID(),
    });
    expect(issue.status).toBe(403);
    expect(issue.body.key).toBeUndefined();
    expect((await weft.http('GET', `/api/v1/api-keys/by-org/${org.id}`, restricted)).status).toBe(403);
    const adminKeyId = (before.body.items as { id: string; processIds: unknown }[]).find(
      (key) => key.processIds === null,
    )!.id;
    expect((await weft.http('DELETE', `/api/v1/api-keys/by-id/${adminKeyId}`, restricted)).status).toBe(403);
    // Nothing changed: the same keys, and the organization key still works.
    const after = await weft.http('GET', `/api/v1/api-keys/by-org/${org.id}`, org.key);
    expect(after.status).toBe(200);
    expect(after.body.items).toEqual(before.body.items);
  });

  test('a restricted key cannot create, list, read or delete connections', async () => {
    const create = await weft.http('POST', `/api/v1/connections/by-org/${org.id}`, restricted, {
      type: 'http',
      name: 'mine now',
      data: { token: 't' },
    });
    expect(create.status).toBe(403);
    expect((await weft.http('GET', `/api/v1/connections/by-org/${org.id}`, restricted)).status).toBe(403);
    expect((await weft.http('GET', `/api/v1/connections/by-id/${connectionId}`, restricted)).status).toBe(403);
    expect((await weft.http('DELETE', `/api/v1/connections/by-id/${connectionId}`, restricted)).status).toBe(403);
    const list = await weft.http('GET', `/api/v1/connections/by-org/${org.id}`, org.key);
    expect(list.body.items.map((connection: { name: string }) => connection.name)).toEqual(['warehouse']);
  });

  test('a restricted key keeps the connections of its process but cannot point it at others', async () => {
    const another = await weft.http('POST', `/api/v1/connections/by-org/${org.id}`, org.key, {
      type: 'postgres',
      name: 'payroll',
      data: { url: 'postgres://u:payroll@127.0.0.1/db' },
    });
    expect(another.status).toBe(201);
    const added = await weft.http('POST', `/api/v1/processes/${mine}/nodes`, restricted, {
      type: 'sqlNode',
      position: { x: 1, y: 0 },
      config: { label: 'Payroll', connectionId: another.body.id, query: 'select * from salaries' },
    });
    expect(added.status).toBe(403);
    // Its own connection it may keep using in new nodes.
    const kept = await weft.http('POST', `/api/v1/processes/${mine}/nodes`, restricted, {
      type: 'sqlNode',
      position: { x: 1, y: 0 },
      config: { label: 'Again', connectionId, query: 'select 2' },
    });
    expect(kept.status).toBe(201);
    const process = await weft.http('GET', `/api/v1/processes/by-id/${mine}`, restricted);
    expect(process.body.nodes.map((node: { config: { label: string } }) => node.config.label).sort()).toEqual([
      'Again',
      'Query',
    ]);
  });

  test('a restricted key may restore a version of its process that used another connection', async () => {
    const payroll = await weft.http('POST', `/api/v1/connections/by-org/${org.id}`, org.key, {
      type: 'mysql',
      name: 'payroll history',
      data: { password: 'p' },
    });
    const node = await weft.http('POST', `/api/v1/processes/${mine}/nodes`, org.key, {
      type: 'sqlNode',
      position: { x: 2, y: 0 },
      config: { label: 'History', connectionId: payroll.body.id, query: 'select 3' },
    });
    expect(node.status).toBe(201);
    const version = await weft.http('POST', `/api/v1/processes/versions/${mine}`, org.key, { label: 'with history' });
    expect(version.status).toBe(201);
    expect((await weft.http('DELETE', `/api/v1/processes/${mine}/nodes/${node.body.id}`, org.key)).status).toBe(200);
    const restored = await weft.http('POST', `/api/v1/processes/version/${version.body.id}/restore`, restricted);
    expect(restored.status).toBe(200);
    expect(restored.body.nodes.map((each: { id: string }) => each.id)).toContain(node.body.id);
  });

  test("a collection shows a restricted key only its own processes' names", async () => {
    const collection = await weft.http('POST', `/api/v1/process-collections/by-org/${org.id}`, org.key, {
      name: 'Everything',
    });
    for (const processId of [mine, other]) {
      const added = await weft.http(
        'POST',
        `/api/v1/process-collections/${collection.body.id}/add-process/${processId}`,
        org.key,
      );
      expect(added.status).toBe(200);
    }
    const asOrg = await weft.http('GET', `/api/v1/process-collections/by-id/${collection.body.id}`, org.key);
    expect(asOrg.body.members.map((member: { id: string }) => member.id).sort()).toEqual([mine, other].sort());
    const asRestricted = await weft.http('GET', `/api/v1/process-collections/by-id/${collection.body.id}`, restricted);
    expect(asRestricted.status).toBe(200);
    expect(asRestricted.body.members).toEqual([{ id: mine, name: 'Mine' }]);
    expect(JSON.stringify(asRestricted.body)).not.toContain('Secret plans');
  });
});
