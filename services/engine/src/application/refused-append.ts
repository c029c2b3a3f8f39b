import type { FailedNodeInfo, IterationPath, NodeInputSource } from '@weft/contracts';
import type { ExecutionCommand, NodeStart } from '../domain/execution/commands.js';
import { runKey, type ExecutionState } from '../domain/execution/state.js';
import type { ExecutionGraph } from '../domain/graph/execution-graph.js';
import { describeUnstorable, storableText } from '../domain/graph/json-value.js';
import type { AppendRefusedError } from './execution-event-writer.js';

/**
 * What ends an execution whose events the database refused: the node that produced them fails,
 * then the execution, with messages that name the node and the cause but quote none of the
 * refused data (so these events can be stored). Writing the refused events again would only be
 * refused again, and resuming would re-run every node of the lost commits.
 */
/** The event fields that carry user data, and what a message calls them. */
const DATA_FIELDS: readonly (readonly [string, string])[] = [
  ['outputData', 'output'],
  ['inputData', 'input'],
  ['loopItem', 'loop item'],
  ['error', 'error message'],
  ['errorMessage', 'error message'],
];

interface RefusedNodeEvent {
  nodeId?: string;
  iteration?: IterationPath;
  durationMs?: number;
  /** The node's start, when the refused end carried it (CarriedNodeStart). */
  nodeName?: string;
  nodeType?: string;
  inputFrom?: NodeInputSource[];
  startedAt?: string;
}

/** The start the refused event carried: the node's failure carries it in its place. */
const carriedStart = (data: RefusedNodeEvent | undefined): NodeStart | undefined =>
  data?.startedAt !== undefined && data.nodeName !== undefined && data.nodeType !== undefined
    ? {
        nodeName: data.nodeName,
        nodeType: data.nodeType,
        inputFrom: data.inputFrom ?? [],
        startedAt: new Date(data.startedAt),
      }
    : undefined;

/** Why the database refused `refused`, in one storable line. */
export function refusalCause(refused: AppendRefusedError): string {
  for (const { data } of refused.events) {
    const fields = (data ?? {}) as Record<string, unknown>;
    for (const [field, what] of DATA_FIELDS) {
      const cause = describeUnstorable(fields[field], what);
      if (cause) return cause;
    }
    const cause = describeUnstorable(data, 'event');
    if (cause) return cause;
  }
  const detail = refused.cause instanceof Error ? refused.cause.message : String(refused.cause);
  return `the database refused to store the result (SQLSTATE ${refused.sqlState}: ${storableText(detail)})`;
}

/** The commands that record the refusal against `state` (the events stored before it). */
export function commandsAfterRefusedAppend(
  refused: AppendRefusedError,
  graph: ExecutionGraph,
  state: ExecutionState,
  now: Date,
): ExecutionCommand[] {
  const cause = refusalCause(refused);
  const at = refused.events.map((event) => event.data as RefusedNodeEvent).find((data) => data?.nodeId);
  const node = at?.nodeId ? graph.nodes.get(at.nodeId) : undefined;
  const commands: ExecutionCommand[] = [];
  const status = node ? state.nodeRuns.get(runKey(node.id, at?.iteration))?.status : undefined;
  const start = status === 'running' ? undefined : carriedStart(at);
  if (node && (status === 'running' || (start && status !== 'completed' && status !== 'skipped'))) {
    const iteration = at?.iteration?.length ? { iteration: at.iteration } : {};
    commands.push({
      type: 'FailNode',
      data: {
        nodeId: node.id,
        error: cause,
        durationMs: at?.durationMs ?? 0,
        ...iteration,
        ...(start ? { start } : {}),
      },
      metadata: { now },
    });
  }
  const failedNode: FailedNodeInfo | null = node
    ? { id: node.id, name: node.label, type: node.type, error: cause }
    : null;
  commands.push({
    type: 'FailExecution',
    data: { errorMessage: node ? `${node.label}: ${cause}` : cause, failedNode },
    metadata: { now },
  });
  return commands;
}
