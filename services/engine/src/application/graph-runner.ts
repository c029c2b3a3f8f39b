import type { DecryptedConnection, FileReference, IterationPath, NodeInputSource, TokenUsage } from '@weft/contracts';
import type { ExecutionGraph, GraphEdge, GraphNode } from '../domain/graph/execution-graph.js';
import { LOOP_BODY_HANDLE } from '../domain/graph/execution-graph.js';
import { mergeNodeInput, outputKey } from '../domain/graph/node-input.js';
import { storableText, toJsonValue } from '../domain/graph/json-value.js';
import { resolveTemplates } from '../domain/graph/templates.js';
import type { NodeExecutorRegistry, NodeResult, NodeRunContext } from '../domain/nodes/node-executor.js';
import { EventTooLargeError, ValueTooLargeError } from './event-values.js';
import { sleepUntil } from './long-timer.js';

/**
 * Runs an execution's graph in memory: a node starts as soon as all its parents are done, ready
 * nodes run concurrently, nodes without an active incoming edge are skipped, loop bodies run per
 * item. It knows node types only through the executor interface and reports every step to a
 * listener, which turns steps into events; it stores nothing itself.
 */
export interface CompletedNode {
  input: Record<string, unknown>;
  output: unknown;
  handles: readonly string[];
  tokenUsage?: TokenUsage;
}

/** Where a node's input comes from: what NodeStarted records instead of a copy of the input. */
export interface InputOrigin {
  inputFrom: NodeInputSource[];
  /** Set for a loop body node fed by its loop: the item it sees. */
  loopItem?: unknown;
}

/**
 * Receives every step. A step the listener cannot record (EventTooLargeError) fails the node:
 * a refused start fails it unstarted, a refused completion records it failed. When `nodeStarted`
 * returns a promise the node runs only once it resolves (its start is durable); a rejection
 * fails the run before the node does anything.
 */
export interface RunListener {
  nodeStarted(
    node: GraphNode,
    input: Record<string, unknown>,
    iteration: IterationPath,
    at: Date,
    origin: InputOrigin,
  ): void | Promise<void>;
  nodeCompleted(node: GraphNode, result: CompletedNode, iteration: IterationPath, at: Date, durationMs: number): void;
  nodeFailed(node: GraphNode, error: string, iteration: IterationPath, at: Date, durationMs: number): void;
  nodeSkipped(node: GraphNode, iteration: IterationPath, at: Date): void;
}

export interface RunGraphInput {
  graph: ExecutionGraph;
  executors: NodeExecutorRegistry;
  executionId: string;
  processId: string;
  organizationId: string;
  triggerNodeId: string;
  triggerData: unknown;
  /** Nodes that completed before (resume, retry): not run again, keyed by `nodeRunKey`; their input is rebuilt from their parents. */
  completed?: ReadonlyMap<string, Omit<CompletedNode, 'input'>>;
  /** First start of nodes that ran before, keyed by `nodeRunKey` (durable waits count from it). */
  firstStarts?: ReadonlyMap<string, Date>;
  signal: AbortSignal;
  listener: RunListener;
  now: () => Date;
  connection: (connectionId: string) => Promise<DecryptedConnection>;
  /** How a node waits until a time (the engine parks long waits); default a timer. */
  sleepUntil?: (at: Date, signal: AbortSignal) => Promise<void>;
  /** Largest a node's config may grow when its templates are resolved (WEFT_NODE_CONFIG_MAX_BYTES). */
  maxConfigBytes?: number;
  /** Wraps each node's work (tracing spans); default runs it as is. */
  around?: <T>(node: GraphNode, iteration: IterationPath, work: () => Promise<T>) => Promise<T>;
}

export type RunOutcome =
  | { status: 'completed'; results: ReadonlyMap<string, NodeOutcome> }
  | { status: 'failed'; node: GraphNode; error: string }
  | { status: 'aborted'; reason: unknown };

/** `source` names the run (for its children's InputOrigin); `loopSeed` marks a loop as its body sees it. */
export type NodeOutcome =
  | ({ status: 'completed'; source: NodeInputSource; loopSeed?: { item: unknown } } & CompletedNode)
  | { status: 'skipped' };

/** Key of one run of a node: its id, prefixed by the loop iterations it ran in. */
export const nodeRunKey = (nodeId: string, iteration: IterationPath): string =>
  iteration.length === 0 ? nodeId : `${iteration.map((i) => `${i.loopNodeId}#${i.index}`).join('/')}/${nodeId}`;

class NodeRunFailed extends Error {
  constructor(
    readonly node: GraphNode,
    message: string,
  ) {
    super(message);
  }
}

/** Stored as event data: a NUL or lone surrogate (quoted from user data) would make jsonb refuse it. */
const messageOf = (error: unknown): string => storableText(error instanceof Error ? error.message : String(error));

const collectFiles = (input: Record<string, unknown>): FileReference[] => {
  const files: FileReference[] = [];
  for (const value of Object.values(input)) {
    const candidate = (value as { files?: unknown } | null)?.files;
    if (Array.isArray(candidate)) files.push(...(candidate as FileReference[]));
  }
  return files;
};

const withPassthroughFiles = (output: unknown, input: Record<string, unknown>): unknown => {
  const files = collectFiles(input);
  if (files.length === 0) return output;
  if (output === null || typeof output !== 'object' || Array.isArray(output)) return { value: output, files };
  const own = (output as { files?: unknown }).files;
  return { ...output, files: [...(Array.isArray(own) ? (own as FileReference[]) : []), ...files] };
};

export async function runGraph(input: RunGraphInput): Promise<RunOutcome> {
  const { graph } = input;
  const internal = new AbortController();
  const onOuterAbort = (): void => internal.abort(input.signal.reason);
  if (input.signal.aborted) return { status: 'aborted', reason: input.signal.reason };
  input.signal.addEventListener('abort', onOuterAbort, { once: true });

  const bodyScopes = new Map<string, Set<string>>();
  const scopeOfLoop = (loopId: string): Set<string> => {
    let scope = bodyScopes.get(loopId);
    if (!scope) {
      const body = graph.loopBodies.get(loopId) ?? new Set<string>();
      const nested = new Set<string>();
      for (const id of body) {
        if (graph.nodes.get(id)?.type === 'loopNode')
          for (const inner of graph.loopBodies.get(id) ?? []) nested.add(inner);
      }
      scope = new Set([...body].filter((id) => !nested.has(id)));
      bodyScopes.set(loopId, scope);
    }
    return scope;
  };

  const runScope = (
    scope: ReadonlySet<string>,
    iteration: IterationPath,
    outer: (nodeId: string) => NodeOutcome | undefined,
  ): Promise<Map<string, NodeOutcome>> =>
    new Promise((resolveScope, rejectScope) => {
      const results = new Map<string, NodeOutcome>();
      const waiting = new Map<string, number>();
      let unfinished = scope.size;
      let settled = false;
      const resultOf = (id: string): NodeOutcome | undefined => results.get(id) ?? outer(id);

      const finish = (node: GraphNode, outcome: NodeOutcome): void => {
        if (settled) return;
        results.set(node.id, outcome);
        unfinished--;
        for (const edge of graph.outgoing.get(node.id) ?? []) {
          if (!scope.has(edge.target)) continue;
          const left = (waiting.get(edge.target) ?? 1) - 1;
          waiting.set(edge.target, left);
          if (left === 0) start(edge.target);
        }
        if (unfinished === 0) {
          settled = true;
          resolveScope(results);
        }
      };
      const fail = (error: unknown): void => {
        if (settled) return;
        settled = true;
        rejectScope(error instanceof Error ? error : new Error(String(error)));
      };

      const skip = (node: GraphNode): void => {
        input.listener.nodeSkipped(node, iteration, input.now());
        finish(node, { status: 'skipped' });
      };

      const start = (id: string): void => {
        const node = graph.nodes.get(id) as GraphNode;
        if (internal.signal.aborted) return;
        const incoming = graph.incoming.get(id) ?? [];
        if (node.type === 'inputNode' && incoming.length === 0) {
          if (id !== input.triggerNodeId) return skip(node);
          return void run(node, {}).catch(fail);
        }
        const active = incoming.filter((edge: GraphEdge) => {
          const parent = resultOf(edge.source);
          return parent?.status === 'completed' && parent.handles.includes(edge.sourceHandle);
        });
        if (active.length === 0) return skip(node);
        const origin: InputOrigin = { inputFrom: [] };
        const parents = active.map((edge) => {
          const parent = resultOf(edge.source) as Extract<NodeOutcome, { status: 'completed' }>;
          const parentNode = graph.nodes.get(edge.source) as GraphNode;
          if (parent.loopSeed) origin.loopItem = parent.loopSeed.item;
          if (!input.executors.get(parentNode.type)?.handlesCarryOutputKeys) {
            origin.inputFrom.push(parent.source);
            return { label: parentNode.label, input: parent.input, output: parent.output };
          }
          origin.inputFrom.push({ ...parent.source, handle: edge.sourceHandle });
          return { label: parentNode.label, input: parent.input, output: outputKey(parent.output, edge.sourceHandle) };
        });
        run(node, mergeNodeInput(parents), origin).catch(fail);
      };

      const source = (node: GraphNode): NodeInputSource =>
        iteration.length === 0 ? { nodeId: node.id } : { nodeId: node.id, iteration };

      const run = async (
        node: GraphNode,
        nodeInput: Record<string, unknown>,
        origin: InputOrigin = { inputFrom: [] },
      ): Promise<void> => {
        const key = nodeRunKey(node.id, iteration);
        const before = input.completed?.get(key);
        if (before) {
          const { output, handles } = before;
          return finish(node, { status: 'completed', source: source(node), input: nodeInput, output, handles });
        }
        const executor = input.executors.get(node.type);
        const startedAt = input.now();
        let recorded: void | Promise<void>;
        try {
          recorded = input.listener.nodeStarted(node, nodeInput, iteration, startedAt, origin);
        } catch (error) {
          if (error instanceof EventTooLargeError || error instanceof ValueTooLargeError)
            throw new NodeRunFailed(node, error.message);
          throw error;
        }
        if (recorded) await recorded;
        let result: NodeResult;
        try {
          if (!executor) throw new Error(`no executor for node type "${node.type}"`);
          if (node.configError) throw new Error(node.configError);
          const config = resolveTemplates(node.config, nodeInput, executor.rawConfigKeys, input.maxConfigBytes);
          const context: NodeRunContext = {
            executionId: input.executionId,
            processId: input.processId,
            organizationId: input.organizationId,
            node,
            runKey: key,
            signal: internal.signal,
            now: input.now,
            firstStartedAt: input.firstStarts?.get(key) ?? startedAt,
            triggerData: input.triggerData,
            triggerNodeId: input.triggerNodeId,
            sleepUntil: (at) =>
              input.sleepUntil ? input.sleepUntil(at, internal.signal) : sleepUntil(at, input.now, internal.signal),
            connection: input.connection,
            runLoopBody: async (item, index) => {
              const bodyIteration = [...iteration, { loopNodeId: node.id, index }];
              const seed: NodeOutcome = {
                status: 'completed',
                source: source(node),
                loopSeed: { item },
                input: nodeInput,
                output: { item, index },
                handles: [LOOP_BODY_HANDLE],
              };
              const bodyScope = scopeOfLoop(node.id);
              const bodyResults = await runScope(bodyScope, bodyIteration, (id) =>
                id === node.id ? seed : resultOf(id),
              );
              const sinks: Record<string, unknown> = {};
              for (const id of bodyScope) {
                const outcome = bodyResults.get(id);
                const leadsOut = (graph.outgoing.get(id) ?? []).some((edge) => bodyScope.has(edge.target));
                if (outcome?.status === 'completed' && !leadsOut) {
                  sinks[(graph.nodes.get(id) as GraphNode).label] = outcome.output;
                }
              }
              return sinks;
            },
          };
          result = input.around
            ? await input.around(node, iteration, () => executor.execute(config, nodeInput, context))
            : await executor.execute(config, nodeInput, context);
          result = { ...result, output: toJsonValue(result.output) };
        } catch (error) {
          if (internal.signal.aborted) throw error;
          if (error instanceof NodeRunFailed) {
            // A node inside this loop's body failed: the loop fails with it, the inner node stays the cause.
            const at = input.now();
            input.listener.nodeFailed(node, error.message, iteration, at, at.getTime() - startedAt.getTime());
            throw error;
          }
          const at = input.now();
          const message = messageOf(error);
          input.listener.nodeFailed(node, message, iteration, at, at.getTime() - startedAt.getTime());
          throw new NodeRunFailed(node, message);
        }
        if (internal.signal.aborted) return;
        const output =
          node.config.passthroughFiles === true ? withPassthroughFiles(result.output, nodeInput) : result.output;
        const completed: CompletedNode = {
          input: nodeInput,
          output,
          handles: result.handles ?? ['output'],
          ...(result.tokenUsage ? { tokenUsage: result.tokenUsage } : {}),
        };
        const at = input.now();
        try {
          input.listener.nodeCompleted(node, completed, iteration, at, at.getTime() - startedAt.getTime());
        } catch (error) {
          if (!(error instanceof EventTooLargeError || error instanceof ValueTooLargeError)) throw error;
          input.listener.nodeFailed(node, error.message, iteration, at, at.getTime() - startedAt.getTime());
          throw new NodeRunFailed(node, error.message);
        }
        finish(node, { status: 'completed', source: source(node), ...completed });
      };

      for (const id of scope) {
        const inScopeParents = (graph.incoming.get(id) ?? []).filter((edge) => scope.has(edge.source)).length;
        waiting.set(id, inScopeParents);
      }
      if (scope.size === 0) {
        settled = true;
        resolveScope(results);
        return;
      }
      const roots = [...waiting].filter(([, count]) => count === 0).map(([id]) => id);
      for (const id of roots) start(id);
    });

  const aborted = new Promise<never>((_, reject) => {
    internal.signal.addEventListener('abort', () => reject(internal.signal.reason as Error), { once: true });
  });
  aborted.catch(() => undefined);
  try {
    const results = await Promise.race([runScope(graph.mainScope, [], () => undefined), aborted]);
    return { status: 'completed', results };
  } catch (error) {
    if (error instanceof NodeRunFailed && !input.signal.aborted) {
      internal.abort(error);
      return { status: 'failed', node: error.node, error: error.message };
    }
    internal.abort(error);
    return { status: 'aborted', reason: input.signal.aborted ? input.signal.reason : error };
  } finally {
    input.signal.removeEventListener('abort', onOuterAbort);
  }
}
