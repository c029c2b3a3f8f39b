import type { ProcessEvent } from '../src/domain/process/events.js';
import { edge, ids, realisticEdges, realisticNodes } from './fixtures/realistic-process.js';
import { given, metadata } from './fixtures/process-decider-spec.js';

const at = metadata.now;
const processId = '22222222-2222-4222-8222-222222222222';
const organizationId = '33333333-3333-4333-8333-333333333333';
const settings = { name: 'Orders', description: 'd', maxRetries: 1, errorWebhookUrl: null, timeoutSeconds: 60 };

const created: ProcessEvent = {
  type: 'ProcessCreated',
  data: {
    ...settings,
    processId,
    organizationId,
    nodes: realisticNodes(),
    edges: realisticEdges(),
    createdBy: 'Ada',
    createdById: metadata.actorId,
    at,
  },
};
const lockedEvent: ProcessEvent = { type: 'ProcessLocked', data: { at } };

describe('process decider', () => {
  test('creates a process with its graph and the actor as creator', () => {
    given([])
      .when({
        type: 'CreateProcess',
        data: { ...settings, processId, organizationId, nodes: realisticNodes(), edges: realisticEdges() },
      })
      .then([created]);
  });

  test('refuses a graph whose edge leaves a handle the source does not have, listing every violation', () => {
    const problem = given([])
      .when({
        type: 'CreateProcess',
        data: {
          ...settings,
          name: '',
          processId,
          organizationId,
          nodes: realisticNodes(),
          edges: [edge(ids.edgeTrue, ids.conditional, ids.scriptA, 'maybe'), edge(ids.edgeFalse, ids.input, 'nope')],
        },
      })
      .thenRefuses(400);
    expect(problem.problem.errors?.map((error) => error.path)).toEqual([
      '/name',
      '/edges/0/sourceHandle',
      '/edges/1/targetNodeId',
    ]);
  });

  test('a switch conditional offers its case labels plus default', () => {
    const nodes = realisticNodes().map((node) =>
      node.id === ids.conditional
        ? {
            ...node,
            config: {
              label: 'Route',
              mode: 'switch',
              value: '{{input["Order"]["kind"]}}',
              cases: [{ label: 'gold', equals: 'g' }],
            },
          }
        : node,
    );
    const base = { ...settings, processId, organizationId, nodes };
    const edges = [
      edge(ids.edgeTrue, ids.conditional, ids.scriptA, 'gold'),
      edge(ids.edgeFalse, ids.conditional, ids.scriptB, 'default'),
    ];
    given([])
      .when({ type: 'CreateProcess', data: { ...base, edges } })
      .then([
        {
          type: 'ProcessCreated',
          data: { ...base, edges, createdBy: 'Ada', createdById: metadata.actorId, at },
        },
      ]);
    given([])
      .when({
        type: 'CreateProcess',
        data: { ...base, edges: [edge(ids.edgeTrue, ids.conditional, ids.scriptA, 'true')] },
      })
      .thenRefuses(400);
  });

  test('loop, multi-output script and schematization handles', () => {
    const loop = {
      id: '00000000-0000-4000-8000-000000000010',
      type: 'loopNode',
      position: { x: 0, y: 0 },
      config: { label: 'Loop', items: '{{input["Order"]["items"]}}' },
    };
    const script = {
      id: '00000000-0000-4000-8000-000000000011',
      type: 'scriptNode',
      position: { x: 0, y: 0 },
      config: { label: 'Split', code: 'return {}', outputs: ['ok', 'bad'] },
    };
    const schematize = {
      id: '00000000-0000-4000-8000-000000000012',
      type: 'schematizationNode',
      position: { x: 0, y: 0 },
      config: { label: 'Parse', schemaId: 's', selectedDataBlocks: ['invoice'] },
    };
    const nodes = [...realisticNodes(), loop, script, schematize];
    const data = { ...settings, processId, organizationId, nodes };
    const ok = [
      edge('00000000-0000-4000-8000-0000000000f1', loop.id, ids.scriptA, 'start'),
      edge('00000000-0000-4000-8000-0000000000f2', loop.id, ids.scriptB, 'output'),
      edge('00000000-0000-4000-8000-0000000000f3', script.id, ids.output, 'bad'),
      edge('00000000-0000-4000-8000-0000000000f4', schematize.id, ids.output, 'invoice'),
    ];
    expect(
      given([])
        .when({ type: 'CreateProcess', data: { ...data, edges: ok } })
        .thenEvents(),
    ).toHaveLength(1);
    for (const [source, handle] of [
      [loop.id, 'body'],
      [script.id, 'output'],
      [schematize.id, 'output'],
    ] as const) {
      given([])
        .when({
          type: 'CreateProcess',
          data: { ...data, edges: [edge('00000000-0000-4000-8000-0000000000f9', source, ids.output, handle)] },
        })
        .thenRefuses(400);
    }
  });

  test('deleting a node deletes its edges', () => {
    given([created])
      .when({ type: 'DeleteNode', data: { nodeId: ids.conditional } })
      .then([
        {
          type: 'NodeDeleted',
          data: {
            nodeId: ids.conditional,
            removedEdgeIds: [ids.edgeInputConditional, ids.edgeTrue, ids.edgeFalse],
            at,
          },
        },
      ]);
  });

  test('renaming a label rewrites every template that references it', () => {
    const events = given([created])
      .when({ type: 'UpdateNode', data: { nodeId: ids.input, config: { label: 'Purchase', triggerType: 'webhook' } } })
      .thenEvents();
    expect(events).toHaveLength(1);
    const event = events[0] as Extract<ProcessEvent, { type: 'NodeUpdated' }>;
    expect(event.data.rewrittenConfigs.map((entry) => entry.nodeId).sort()).toEqual(
      [ids.conditional, ids.output].sort(),
    );
    const output = event.data.rewrittenConfigs.find((entry) => entry.nodeId === ids.output);
    expect(output?.config.fields).toEqual({
      order: '{{input["Purchase"]["id"]}}',
      discounted: '{{input["Discount"]["total"]}}',
    });
  });

  test('a label clash is reported on the edited node, whichever node came first; empty labels never clash', () => {
    const refused = given([created])
      .when({ type: 'UpdateNode', data: { nodeId: ids.input, config: { label: 'Reply', triggerType: 'webhook' } } })
      .thenRefuses(400);
    expect(refused.problem.errors).toEqual([
      { path: '/config/label', message: 'label "Reply" is already used by another node' },
    ]);
    const blank = (id: string) => ({ id, type: 'scriptNode', position: { x: 0, y: 0 }, config: { label: '' } });
    const first = given([created])
      .when({ type: 'AddNode', data: { node: blank('00000000-0000-4000-8000-000000000031') } })
      .thenEvents();
    given([created, ...first])
      .when({ type: 'AddNode', data: { node: blank('00000000-0000-4000-8000-000000000032') } })
      .then([{ type: 'NodeAdded', data: { node: blank('00000000-0000-4000-8000-000000000032'), at } }]);
  });

  test('two nodes may not share a label', () => {
    given([created])
      .when({ type: 'UpdateNode', data: { nodeId: ids.scriptB, config: { label: 'Discount', code: 'x' } } })
      .thenRefuses(400);
    given([created])
      .when({
        type: 'AddNode',
        data: {
          node: {
            id: '00000000-0000-4000-8000-000000000099',
            type: 'waitNode',
            position: { x: 1, y: 1 },
            config: { label: 'Order' },
          },
        },
      })
      .thenRefuses(400);
  });

  test('a used node id is a conflict', () => {
    given([created])
      .when({
        type: 'AddNode',
        data: { node: { id: ids.input, type: 'waitNode', position: { x: 1, y: 1 }, config: { label: 'W' } } },
      })
      .thenRefuses(409);
  });

  test('changing a node so an edge loses its handle is refused', () => {
    given([created])
      .when({
        type: 'UpdateNode',
        data: { nodeId: ids.conditional, config: { label: 'Big order', mode: 'switch', value: 'x', cases: [] } },
      })
      .thenRefuses(400);
  });

  test.each([
    [
      'AddNode',
      {
        node: {
          id: '00000000-0000-4000-8000-000000000099',
          type: 'waitNode',
          position: { x: 1, y: 1 },
          config: { label: 'W' },
        },
      },
    ],
    ['UpdateNode', { nodeId: ids.input, position: { x: 5, y: 5 } }],
    ['DeleteNode', { nodeId: ids.input }],
    ['AddEdge', { edge: edge('00000000-0000-4000-8000-0000000000aa', ids.input, ids.output) }],
    ['DeleteEdge', { edgeId: ids.edgeTrue }],
    ['ReplaceGraph', { nodes: [], edges: [] }],
    ['ChangeProcessSettings', { changes: { name: 'x' } }],
    ['DeleteProcess', {}],
    ['RestoreVersion', { versionId: 'v', versionNumber: 1, snapshot: { nodes: [], edges: [] } }],
  ])('a locked process refuses %s with 423', (type, data) => {
    const version: ProcessEvent = {
      type: 'VersionCreated',
      data: {
        versionId: 'v',
        versionNumber: 1,
        label: 'l',
        snapshot: { nodes: [], edges: [] },
        createdBy: 'Ada',
        createdById: metadata.actorId,
        at,
      },
    };
    given([created, version, lockedEvent])
      .when({ type, data } as never)
      .thenRefuses(423);
  });

  test('a locked process still starts and stops', () => {
    given([created, lockedEvent])
      .when({ type: 'StartProcess', data: { schemas: [] } })
      .then([{ type: 'ProcessStarted', data: { at } }]);
    given([created, lockedEvent, { type: 'ProcessStarted', data: { at } }])
      .when({ type: 'StopProcess', data: {} })
      .then([{ type: 'ProcessStopped', data: { at } }]);
  });

  test('starting a process that fails lint answers 400 with the findings', () => {
    const withoutOutput: ProcessEvent = {
      type: 'NodeDeleted',
      data: { nodeId: ids.output, removedEdgeIds: [ids.edgeAOutput, ids.edgeBOutput], at },
    };
    const problem = given([created, withoutOutput])
      .when({ type: 'StartProcess', data: { schemas: [] } })
      .thenRefuses(400);
    expect((problem.problem.findings as { check: string }[]).map((finding) => finding.check)).toContain(
      'output-node-exists',
    );
  });

  test('versions number per process and capture the graph; restore replaces it', () => {
    const first = given([created])
      .when({ type: 'CreateVersion', data: { versionId: 'v1', label: 'first' } })
      .thenEvents();
    expect(first).toEqual([
      {
        type: 'VersionCreated',
        data: {
          versionId: 'v1',
          versionNumber: 1,
          label: 'first',
          snapshot: { nodes: realisticNodes(), edges: realisticEdges() },
          createdBy: 'Ada',
          createdById: metadata.actorId,
          at,
        },
      },
    ]);
    const deleted: ProcessEvent = { type: 'VersionDeleted', data: { versionId: 'v1', at } };
    const second = given([created, ...first, deleted])
      .when({ type: 'CreateVersion', data: { versionId: 'v2', label: 'second' } })
      .thenEvents();
    expect((second[0] as Extract<ProcessEvent, { type: 'VersionCreated' }>).data.versionNumber).toBe(2);
    given([created, ...first, deleted])
      .when({ type: 'RestoreVersion', data: { versionId: 'v1', versionNumber: 1, snapshot: { nodes: [], edges: [] } } })
      .thenRefuses(404);
    given([created, ...first])
      .when({ type: 'RestoreVersion', data: { versionId: 'v1', versionNumber: 1, snapshot: { nodes: [], edges: [] } } })
      .then([{ type: 'VersionRestored', data: { versionId: 'v1', versionNumber: 1, nodes: [], edges: [], at } }]);
  });

  test('lock and unlock are idempotent', () => {
    given([created, lockedEvent]).when({ type: 'LockProcess', data: {} }).then([]);
    given([created]).when({ type: 'UnlockProcess', data: {} }).then([]);
  });

  test('a deleted process is gone', () => {
    given([created, { type: 'ProcessDeleted', data: { at } }])
      .when({ type: 'LockProcess', data: {} })
      .thenRefuses(404);
  });
});
