import { randomUUID } from 'node:crypto';
import { catalogEventSchemas, validateAgainst } from '@weft/contracts';
import { actorOf, openHarness } from './fixtures/catalog-harness.js';

/** Every event the catalog stores matches its published contract schema (contracts/src/events/catalog). */
test('stored catalog events match the contract schemas', async () => {
  const harness = await openHarness('pglite');
  try {
    const org = randomUUID();
    const actor = actorOf(org);
    const created = await harness.call('createProcess', actor, {
      params: { org_id: org },
      body: {
        name: 'Contract',
        nodes: [
          { id: 'a', type: 'inputNode', config: { label: 'A', triggerType: 'manual' } },
          { id: 'b', type: 'outputNode', config: { label: 'B', fields: { x: '{{input["A"]["x"]}}' } } },
        ],
        edges: [{ source_node_id: 'a', target_node_id: 'b' }],
      },
    });
    const id = created.body.id as string;
    const [a] = created.body.nodes as { id: string }[];
    await harness.call('updateProcess', actor, { params: { id }, body: { description: 'd', error_webhook_url: null } });
    const added = await harness.call('addNode', actor, {
      params: { id },
      body: { type: 'waitNode', config: { label: 'W', seconds: 1 } },
    });
    const edge = await harness.call('addEdge', actor, {
      params: { id },
      body: { source_node_id: a!.id, target_node_id: added.body.id },
    });
    await harness.call('updateNode', actor, {
      params: { id, node_id: a!.id },
      body: { config: { label: 'A2', triggerType: 'manual' } },
    });
    await harness.call('deleteEdge', actor, { params: { id, edge_id: edge.body.id } });
    await harness.call('deleteNode', actor, { params: { id, node_id: added.body.id } });
    const version = await harness.call('createVersion', actor, { params: { process_id: id }, body: { label: 'v' } });
    await harness.call('replaceGraph', actor, {
      params: { id },
      body: { nodes: [{ type: 'inputNode', config: { label: 'Only', triggerType: 'manual' } }], edges: [] },
    });
    await harness.call('restoreVersion', actor, { params: { version_id: version.body.id } });
    await harness.call('deleteVersion', actor, { params: { version_id: version.body.id } });
    for (const name of ['lockProcess', 'unlockProcess', 'startProcess', 'stopProcess'] as const)
      await harness.call(name, actor, { params: { id } });
    await harness.call('forkProcess', actor, { params: { id }, body: { name: 'Fork' } });
    await harness.call('deleteProcess', actor, { params: { id } });
    const schema = await harness.call('createSchema', actor, {
      params: { org_id: org },
      body: { name: 'S', dataBlocks: [{ name: 'b', jsonSchema: {} }] },
    });
    await harness.call('updateSchema', actor, { params: { id: schema.body.id }, body: { name: 'S2' } });
    const collection = await harness.call('createProcessCollection', actor, {
      params: { org_id: org },
      body: { name: 'C' },
    });
    const child = await harness.call('createProcessCollection', actor, {
      params: { org_id: org },
      body: { name: 'Child', parentCollectionId: collection.body.id },
    });
    const other = await harness.call('createProcess', actor, { params: { org_id: org }, body: { name: 'O' } });
    await harness.call('addProcessToCollection', actor, { params: { id: collection.body.id, pid: other.body.id } });
    await harness.call('removeProcessFromCollection', actor, {
      params: { id: collection.body.id, pid: other.body.id },
    });
    await harness.call('updateProcessCollection', actor, { params: { id: child.body.id }, body: { name: 'Kid' } });
    await harness.call('getProcessCollection', actor, { params: { id: collection.body.id } });
    await harness.call('deleteProcessCollection', actor, { params: { id: collection.body.id } });
    await harness.call('deleteSchema', actor, { params: { id: schema.body.id } });
    const connection = await harness.call('createConnection', actor, {
      params: { org_id: org },
      body: { type: 'mysql', name: 'M', data: { password: 'p' } },
    });
    // The trigger's refreshed OAuth tokens arrive over an internal subject, not an HTTP route.
    await harness.app.connections.replaceData(connection.body.id, org, { password: 'q' }, { actor });
    await harness.call('deleteConnection', actor, { params: { id: connection.body.id } });

    const events = await harness.store.readAll();
    const seen = new Set(events.map((event) => event.type));
    // CollectionViewed stays in the contract only so streams written before decision 0004 replay.
    const stillAppended = Object.keys(catalogEventSchemas).filter((type) => type !== 'CollectionViewed');
    expect([...seen].sort()).toEqual(stillAppended.sort());
    for (const event of events) {
      const contract = catalogEventSchemas[event.type];
      expect([event.type, contract && validateAgainst(contract.schema, event.data)]).toEqual([event.type, []]);
      expect(event.metadata).toMatchObject({ actorId: actor.userId, actorName: actor.userName, organizationId: org });
    }
  } finally {
    await harness.close();
  }
});
