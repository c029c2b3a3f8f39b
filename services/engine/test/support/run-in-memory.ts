import type { DecryptedConnection, GraphSnapshot } from '@weft/contracts';
import { runGraph, type CompletedNode, type RunOutcome } from '../../src/application/graph-runner.js';
import { compileGraph } from '../../src/domain/graph/execution-graph.js';
import type { NodeExecutor, NodeExecutorRegistry } from '../../src/domain/nodes/node-executor.js';
import { conditionalNodeExecutor } from '../../src/domain/nodes/conditional-node.js';
import { inputNodeExecutor } from '../../src/domain/nodes/input-node.js';
import { loopNodeExecutor } from '../../src/domain/nodes/loop-node.js';
import { outputNodeExecutor } from '../../src/domain/nodes/output-node.js';
import { waitNodeExecutor } from '../../src/domain/nodes/wait-node.js';
import { RecordingListener } from './recording-listener.js';

/** The pure node types; tests add their own stubs for side-effecting ones. */

export const pureExecutors = (...extra: NodeExecutor<any>[]): NodeExecutorRegistry =>
  new Map(
    [inputNodeExecutor, outputNodeExecutor, conditionalNodeExecutor, loopNodeExecutor, waitNodeExecutor, ...extra].map(
      (e) => [e.type, e],
    ),
  );

export interface InMemoryRun {
  outcome: RunOutcome;
  listener: RecordingListener;
}

export async function runInMemory(
  snapshot: GraphSnapshot,
  triggerNodeId: string,
  triggerData: unknown,
  options: {
    executors?: NodeExecutorRegistry;
    signal?: AbortSignal;
    completed?: ReadonlyMap<string, CompletedNode>;
    firstStarts?: ReadonlyMap<string, Date>;
    connections?: Record<string, DecryptedConnection>;
    /** The running organization (default: a new id), for tests of its files. */
    organizationId?: string;
  } = {},
): Promise<InMemoryRun> {
  const listener = new RecordingListener();
  const outcome = await runGraph({
    graph: compileGraph(snapshot),
    executors: options.executors ?? pureExecutors(),
    executionId: crypto.randomUUID(),
    processId: crypto.randomUUID(),
    organizationId: options.organizationId ?? crypto.randomUUID(),
    triggerNodeId,
    triggerData,
    completed: options.completed,
    firstStarts: options.firstStarts,
    signal: options.signal ?? new AbortController().signal,
    listener,
    now: () => new Date(),
    connection: async (id) => {
      const found = options.connections?.[id];
      if (!found) throw new Error(`connection ${id} not found`);
      return found;
    },
  });
  return { outcome, listener };
}
