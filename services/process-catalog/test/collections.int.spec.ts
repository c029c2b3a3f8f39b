import { randomUUID } from 'node:crypto';
import { rebuildReadModels } from '@weft/event-store';
import { catalogProjections } from '../src/application/catalog-application.js';
import { actorOf, backends, openHarness, type CatalogHarness } from './fixtures/catalog-harness.js';

describe.each(backends())('collections on %s', (backend) => {
  let harness: CatalogHarness;
  const org = randomUUID();
  const actor = actorOf(org);

  beforeAll(async () => {
    harness = await openHarness(backend);
  });
  afterAll(async () => {
    await harness.close();
  });

  const collection = async (name: string, parentCollectionId?: string) => {
    const reply = await harness.call('createProcessCollection', actor, {
      params: { org_id: org },
      body: { name, description: `${name} processes`, ...(parentCollectionId ? { parentCollectionId } : {}) },
    });
    expect(reply.status).toBe(201);
    return reply.body as { id: string; parentCollectionId: string | null };
  };
  const process = async (name: string) =>
    (await harness.call('createProcess', actor, { params: { org_id: org }, body: { name } })).body as { id: string };

  test('a collection has every field of the spec; viewing it sets viewedAt and lists members', async () => {
    const root = await collection('Finance');
    expect(root).toEqual({
      id: expect.any(String),
      organizationId: org,
      name: 'Finance',
      description: 'Finance processes',
      createdBy: 'Grace Hopper',
      createdById: actor.userId,
      parentCollectionId: null,
      createdAt: expect.any(String),
      viewedAt: null,
      updatedAt: expect.any(String),
      revision: 1,
    });
    const invoices = await process('Invoices');
    const payroll = await process('Payroll');
    for (const pid of [invoices.id, payroll.id, invoices.id]) {
      expect((await harness.call('addProcessToCollection', actor, { params: { id: root.id, pid } })).status).toBe(200);
    }
    const viewed = await harness.call('getProcessCollection', actor, { params: { id: root.id } });
    expect(viewed.body.viewedAt).toEqual(expect.any(String));
    expect(viewed.body.members).toEqual([
      { id: invoices.id, name: 'Invoices' },
      { id: payroll.id, name: 'Payroll' },
    ]);
    const filtered = await harness.call('listProcesses', actor, {
      params: { org_id: org },
      query: { collectionId: root.id },
    });
    expect(filtered.body.items.map((item: { name: string }) => item.name)).toEqual(['Invoices', 'Payroll']);

    // A process may be in several collections.
    const other = await collection('Audited');
    await harness.call('addProcessToCollection', actor, { params: { id: other.id, pid: invoices.id } });
    expect((await harness.call('getProcessCollection', actor, { params: { id: other.id } })).body.members).toHaveLength(
      1,
    );

    await harness.call('removeProcessFromCollection', actor, { params: { id: root.id, pid: payroll.id } });
    await harness.call('removeProcessFromCollection', actor, { params: { id: root.id, pid: payroll.id } });
    await harness.call('deleteProcess', actor, { params: { id: invoices.id } });
    expect((await harness.call('getProcessCollection', actor, { params: { id: root.id } })).body.members).toEqual([]);
    expect(
      (await harness.call('addProcessToCollection', actor, { params: { id: root.id, pid: randomUUID() } })).status,
    ).toBe(404);
    expect(
      (await harness.call('getProcessCollection', actorOf(randomUUID()), { params: { id: root.id } })).status,
    ).toBe(404);
    expect((await harness.call('getSchemaCollection', actor, { params: { id: root.id } })).status).toBe(404);
  });

  test('nesting: no collection becomes its own ancestor; delete moves children up and removes memberships', async () => {
    const top = await collection('Top');
    const middle = await collection('Middle', top.id);
    const leaf = await collection('Leaf', middle.id);
    for (const parent of [leaf.id, middle.id, top.id]) {
      const reply = await harness.call('updateProcessCollection', actor, {
        params: { id: top.id },
        body: { parentCollectionId: parent },
      });
      expect(reply.status).toBe(400);
    }
    expect(
      (
        await harness.call('updateProcessCollection', actor, {
          params: { id: top.id },
          body: { parentCollectionId: randomUUID() },
        })
      ).status,
    ).toBe(400);
    const tree = await harness.call('listProcessCollections', actor, {
      params: { org_id: org },
      query: { tree: 'true' },
    });
    const topNode = tree.body.items.find((item: { id: string }) => item.id === top.id);
    expect(topNode.children.map((child: { id: string }) => child.id)).toEqual([middle.id]);
    expect(topNode.children[0].children.map((child: { id: string }) => child.id)).toEqual([leaf.id]);

    const p = await process('Member');
    await harness.call('addProcessToCollection', actor, { params: { id: middle.id, pid: p.id } });
    expect((await harness.call('deleteProcessCollection', actor, { params: { id: middle.id } })).status).toBe(204);
    const movedLeaf = await harness.call('getProcessCollection', actor, { params: { id: leaf.id } });
    expect(movedLeaf.body.parentCollectionId).toBe(top.id);
    expect((await harness.call('getProcess', actor, { params: { id: p.id } })).status).toBe(200);
    const members = await harness.store.db
      .selectFrom('catalog_process_collection_members')
      .selectAll()
      .where('collection_id', '=', middle.id)
      .execute();
    expect(members).toEqual([]);
    const flat = await harness.call('listProcessCollections', actor, { params: { org_id: org }, query: {} });
    expect(flat.body.items.map((item: { id: string }) => item.id)).not.toContain(middle.id);
  });

  test('schema collections are a separate set', async () => {
    const schema = (await harness.call('createSchema', actor, { params: { org_id: org }, body: { name: 'S' } }))
      .body as { id: string };
    const created = await harness.call('createSchemaCollection', actor, {
      params: { org_id: org },
      body: { name: 'Schemas' },
    });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    await harness.call('addSchemaToCollection', actor, { params: { id, sid: schema.id } });
    expect((await harness.call('getSchemaCollection', actor, { params: { id } })).body.members).toEqual([
      { id: schema.id, name: 'S' },
    ]);
    const processCollections = await harness.call('listProcessCollections', actor, {
      params: { org_id: org },
      query: { pageSize: '200' },
    });
    expect(processCollections.body.items.map((item: { id: string }) => item.id)).not.toContain(id);
    const process = (await harness.call('createProcess', actor, { params: { org_id: org }, body: { name: 'P' } }))
      .body as { id: string };
    expect((await harness.call('addSchemaToCollection', actor, { params: { id, sid: process.id } })).status).toBe(404);
    const bySchemaCollection = await harness.call('listSchemas', actor, {
      params: { org_id: org },
      query: { collectionId: id },
    });
    expect(bySchemaCollection.body.items.map((item: { id: string }) => item.id)).toEqual([schema.id]);
  });

  test('every catalog read model rebuilt from the events equals the original', async () => {
    const tables = [
      'catalog_processes',
      'catalog_process_versions',
      'catalog_schemas',
      'catalog_collections',
      'catalog_process_collection_members',
      'catalog_schema_collection_members',
      'catalog_connections',
    ];
    await harness.call('createConnection', actor, {
      params: { org_id: org },
      body: { type: 'http', name: 'API', data: { token: 't' } },
    });
    const snapshot = async () => {
      const result: Record<string, unknown[]> = {};
      for (const table of tables) {
        result[table] = await harness.store.db.selectFrom(table).selectAll().execute();
        result[table].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
      }
      return result;
    };
    const before = await snapshot();
    expect(before.catalog_collections!.length).toBeGreaterThan(0);
    await rebuildReadModels(harness.store, catalogProjections);
    expect(await snapshot()).toEqual(before);
  });
});
