import type { IterationPath } from '@weft/contracts';
import type { EventMetadata, NewEvent } from '@weft/event-store';
import type { ExecutionCommand } from '../domain/execution/commands.js';
import { decide } from '../domain/execution/decide.js';
import { executionStreamId, type ExecutionEvent } from '../domain/execution/events.js';
import { evolve, type ExecutionState } from '../domain/execution/state.js';
import type { GraphNode } from '../domain/graph/execution-graph.js';
import type { CompletedNode, RunListener } from './graph-runner.js';
import type { ExecutionEventWriter } from './execution-event-writer.js';

/**
 * One execution held in memory by the engine running it: its state (folded from its events),
 * the stream version, and the metadata every event carries. Each command is decided against
 * the state, applied at once, and queued on the group-commit writer.
 */
export class ExecutionRun {
  private pendingWrites: Promise<void>[] = [];
  private writeFailure: unknown = null;

  constructor(
    readonly executionId: string,
    readonly state: ExecutionState,
    private version: number,
    private readonly metadata: EventMetadata,
    private readonly writer: ExecutionEventWriter,
    private readonly now: () => Date,
    /** Called once when a write fails (a conflict means the stream changed elsewhere). */
    private readonly onWriteFailure: (error: unknown) => void,
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
    for (const event of events) evolve(this.state, event);
    const expected = this.version === 0 ? 'no_stream' : this.version;
    this.version += events.length;
    const stored: NewEvent[] = events.map((event) => ({ type: event.type, data: event.data, metadata: this.metadata }));
    const write = this.writer.append(executionStreamId(this.executionId), stored, expected).catch((error: unknown) => {
      if (this.writeFailure === null) {
        this.writeFailure = error ?? new Error('write failed');
        this.onWriteFailure(error);
      }
    });
    this.pendingWrites.push(write);
    if (this.pendingWrites.length > 256) this.pendingWrites = [Promise.all(this.pendingWrites).then(() => undefined)];
    return events;
  }

  /** Resolves when every event so far is committed; rejects with the first write failure. */
  async flushed(): Promise<void> {
    await Promise.all(this.pendingWrites);
    if (this.writeFailure !== null) {
      throw this.writeFailure instanceof Error
        ? this.writeFailure
        : new Error('execution write failed', { cause: this.writeFailure });
    }
  }

  /** The graph runner's listener: each step becomes a command on this run. */
  listener(): RunListener {
    const meta = () => ({ now: this.now() });
    const where = (iteration: IterationPath) => (iteration.length > 0 ? { iteration } : {});
    return {
      nodeStarted: (node: GraphNode, input, iteration) => {
        this.execute({
          type: 'StartNode',
          data: { nodeId: node.id, nodeName: node.label, nodeType: node.type, inputData: input, ...where(iteration) },
          metadata: meta(),
        });
      },
      nodeCompleted: (node: GraphNode, result: CompletedNode, iteration, _at, durationMs) => {
        this.execute({
          type: 'CompleteNode',
          data: {
            nodeId: node.id,
            outputData: result.output,
            handles: [...result.handles],
            durationMs,
            ...where(iteration),
          },
          metadata: meta(),
        });
      },
      nodeFailed: (node: GraphNode, error, iteration, _at, durationMs) => {
        this.execute({
          type: 'FailNode',
          data: { nodeId: node.id, error, durationMs, ...where(iteration) },
          metadata: meta(),
        });
      },
      nodeSkipped: (node: GraphNode, iteration) => {
        this.execute({
          type: 'SkipNode',
          data: { nodeId: node.id, nodeName: node.label, nodeType: node.type, ...where(iteration) },
          metadata: meta(),
        });
      },
    };
  }
}
