import type { DecryptedConnection, ProblemViolation, TokenUsage } from '@weft/contracts';
import type { GraphNode } from '../graph/execution-graph.js';

/**
 * What the scheduler knows of a node type: the interface only. Side-effecting implementations
 * (scripts, HTTP, SQL) live in adapters/nodes, so orchestration stays testable with stubs.
 */
export interface NodeResult {
  output: unknown;
  /** Output handles that fire; default `['output']`. */
  handles?: string[];
  /** What the node's language-model calls spent: recorded in its node state, not its output. */
  tokenUsage?: TokenUsage;
}

export interface NodeRunContext {
  executionId: string;
  processId: string;
  organizationId: string;
  node: GraphNode;
  /** The node id, prefixed inside loop bodies by `<loop node id>#<index>/` per enclosing loop. */
  runKey: string;
  /** Aborted when the execution is cancelled, times out or another node failed. */
  signal: AbortSignal;
  now(): Date;
  /** When this node first started in this execution (kept across restarts: durable timers use it). */
  firstStartedAt: Date;
  /** Data the input node that fired received. */
  triggerData: unknown;
  triggerNodeId: string;
  /** Waits until `at` or rejects when the signal aborts. */
  sleepUntil(at: Date): Promise<void>;
  connection(connectionId: string): Promise<DecryptedConnection>;
  /** Loop nodes only: runs the loop body once for an item; resolves to its sink outputs by label. */
  runLoopBody(item: unknown, index: number): Promise<Record<string, unknown>>;
}

export interface NodeExecutor<Config = Record<string, unknown>> {
  readonly type: string;
  /** Top-level config keys never resolved as templates (code, SQL text). */
  readonly rawConfigKeys?: readonly string[];
  /**
   * Each output handle carries the output's key of the same name (a schematizationNode's block
   * handles): a child wired to a handle gets that key's value under the node's label, not the
   * whole output. Otherwise every handle carries the whole output (conditional and script ports).
   */
  readonly handlesCarryOutputKeys?: boolean;
  /** Config violations beyond the shared JSON Schema; empty when valid. */
  validate?(config: Config): ProblemViolation[];
  execute(config: Config, input: Record<string, unknown>, context: NodeRunContext): Promise<NodeResult>;
}

export type NodeExecutorRegistry = ReadonlyMap<string, NodeExecutor<any>>; // eslint-disable-line @typescript-eslint/no-explicit-any

/** A node failure whose message is shown to users as the node's error. */
export class NodeFailure extends Error {
  override name = 'NodeFailure';
}
