import type { IterationPath } from '@weft/contracts';
import type { EventMetadata, NewEvent } from '@weft/event-store';
import type { ExecutionCommand } from '../domain/execution/commands.js';
import { decide } from '../domain/execution/decide.js';
import { executionStreamId, type ExecutionEvent } from '../domain/execution/events.js';
import { evolve, type ExecutionState } from '../domain/execution/state.js';
import type { GraphNode } from '../domain/graph/execution-graph.js';
import type { CompletedNode, RunListener } from './graph-runner.js';
import type { ExecutionEventWriter } from './execution-event-writer.js';
import { DEFAULT_EVENT_SIZE_LIMITS, prepareForStorage, type EventStorage } from './event-values.js';

/**
 * Nodes whose run touches nothing outside the execution and waits on nothing but itself: their
 * events may wait for the run's next ones (a SIGKILL in between only runs them again, harmlessly).
 * Every other node (a wait, a call, a query, a loop ...) has its start and its end written at once,
 * and runs only once its start is durable: every call it makes outside has a NodeStarted on record
 * (a SIGKILL mid-call leaves the start, so a repeat on resume is visible), and a run whose stream
 * was taken over elsewhere fails its append and makes no call at all.
 */
const DEFERRABLE_NODE_TYPES: ReadonlySet<string> = new Set([
  'inputNode',
  'conditionalNode',
  'scriptNode',
  'outputNode',
]);

/** Longest node error recorded: a huge message must not make its NodeFailed event unstorable. */
const MAX_ERROR_CHARS = 16 * 1024;
const bounded = (error: string): string =>
  error.length > MAX_ERROR_CHARS ? `${error.slice(0, MAX_ERROR_CHARS)}… (truncated)` : error;

/**
 * One execution held in memory by the engine running it: its state (folded from its events),
 * the stream version, and the metadata every event carries. Each command is decided against
 * the state, made fit to store (large values to blob storage, oversize events refused before
 * anything changes), applied at once, and queued on the group-commit writer, lazily: it is
 * written with the next commit, within the writer's `lazyMs`, or at once when `flushed()` is awaited
 * or a node with effects outside the execution starts or ends.
 */
export class ExecutionRun {
  private pendingWrites: Promise<void>[] = [];
  private writeFailure: unknown = null;
  /** Set while an append waits for its blob writes: later appends queue behind it, in order. */
  private appendGate: Promise<void> | null = null;

  constructor(
    readonly executionId: string,
    readonly state: ExecutionState,
    private version: number,
    private readonly metadata: EventMetadata,
    private readonly writer: ExecutionEventWriter,
    private readonly now: () => Date,
    /** Called once when a write fails (a conflict means the stream changed elsewhere). */
    private readonly onWriteFailure: (error: unknown) => void,
    private readonly storage: EventStorage = { limits: DEFAULT_EVENT_SIZE_LIMITS },
  ) {}

  /** Trace id of the request that started the execution, when it had one. */
  get traceId(): string | null {
    return typeof this.metadata.traceId === 'string' ? this.metadata.traceId : null;
  }

  get streamVersion(): number {
    return this.version;
  }

  get failedWrite(): unknown {
    return this.writeFailure;
  }

  /** Decides, applies and queues; returns the events (empty when the command changed nothing). */
  execute(command: ExecutionCommand): ExecutionEvent[] {
    const events = decide(command, this.state);
    if (events.length === 0) return events;
    // Throws EventTooLargeError before the state or the stream changes.
    const prepared = events.map((event) => prepareForStorage(event, this.storage));
    for (const event of events) evolve(this.state, event);
    const expected = this.version === 0 ? 'no_stream' : this.version;
    this.version += events.length;
    const stored: NewEvent[] = prepared.map(({ type, data, schemaVersion }) => ({
      type,
      data,
      schemaVersion,
      metadata: this.metadata,
    }));
    const blobWrites = prepared.flatMap((event) => event.blobWrites);
    const write = this.append(stored, expected, blobWrites).catch((error: unknown) => {
      if (this.writeFailure === null) {
        this.writeFailure = error ?? new Error('write failed');
        this.onWriteFailure(error);
      }
    });
    this.pendingWrites.push(write);
    if (this.pendingWrites.length > 256) this.pendingWrites = [Promise.all(this.pendingWrites).then(() => undefined)];
    return events;
  }

  /** Queues the append at once, or, while blob writes are pending, once they and every earlier append are queued. */
  private append(stored: NewEvent[], expected: number | 'no_stream', blobWrites: Promise<void>[]): Promise<void> {
    const streamId = executionStreamId(this.executionId);
    const lazy = { lazy: true };
    if (blobWrites.length === 0 && this.appendGate === null)
      return this.writer.append(streamId, stored, expected, lazy);
    const ready = Promise.all([this.appendGate, ...blobWrites]);
    const appended = ready.then(() => this.writer.append(streamId, stored, expected, lazy));
    // Reactions run in order: the next append is queued after this one (a failure fails it too).
    const gate: Promise<void> = ready.then(() => undefined);
    gate.catch(() => undefined);
    this.appendGate = gate;
    void gate.then(
      () => this.appendGate === gate && (this.appendGate = null),
      () => undefined,
    );
    return appended;
  }

  /** Resolves when every event so far is committed (written at once now); rejects with the first write failure. */
  async flushed(): Promise<void> {
    this.writer.expedite();
    await Promise.all(this.pendingWrites);
    if (this.writeFailure !== null) {
      throw this.writeFailure instanceof Error
        ? this.writeFailure
        : new Error('execution write failed', { cause: this.writeFailure });
    }
  }

  /** The graph runner's listener: each step becomes a command on this run. */
  listener(): RunListener {
    // Each event carries the time the graph runner saw (a wait's deadline counts from the recorded
    // start, so the start must be the very time the run used, not a later reading of the clock).
    const where = (iteration: IterationPath) => (iteration.length > 0 ? { iteration } : {});
    const recordNow = (node: GraphNode): void => {
      if (!DEFERRABLE_NODE_TYPES.has(node.type)) this.writer.expedite();
    };
    return {
      nodeStarted: (node: GraphNode, _input, iteration, at, origin) => {
        this.execute({
          type: 'StartNode',
          data: { nodeId: node.id, nodeName: node.label, nodeType: node.type, ...origin, ...where(iteration) },
          metadata: { now: at },
        });
        if (DEFERRABLE_NODE_TYPES.has(node.type)) return;
        return this.flushed();
      },
      nodeCompleted: (node: GraphNode, result: CompletedNode, iteration, at, durationMs) => {
        this.execute({
          type: 'CompleteNode',
          data: {
            nodeId: node.id,
            outputData: result.output,
            handles: [...result.handles],
            ...(result.tokenUsage ? { tokenUsage: result.tokenUsage } : {}),
            durationMs,
            ...where(iteration),
          },
          metadata: { now: at },
        });
        recordNow(node);
      },
      nodeFailed: (node: GraphNode, error, iteration, at, durationMs) => {
        this.execute({
          type: 'FailNode',
          data: { nodeId: node.id, error: bounded(error), durationMs, ...where(iteration) },
          metadata: { now: at },
        });
        recordNow(node);
      },
      nodeSkipped: (node: GraphNode, iteration, at) => {
        this.execute({
          type: 'SkipNode',
          data: { nodeId: node.id, nodeName: node.label, nodeType: node.type, ...where(iteration) },
          metadata: { now: at },
        });
      },
    };
  }
}
