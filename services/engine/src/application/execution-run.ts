import type { IterationPath } from '@weft/contracts';
import type { EventMetadata, NewEvent, StreamAtVersion } from '@weft/event-store';
import type { ExecutionCommand, NodeStart } from '../domain/execution/commands.js';
import { decide } from '../domain/execution/decide.js';
import { executionStreamId, type ExecutionEvent } from '../domain/execution/events.js';
import { evolve, runKey, type ExecutionState } from '../domain/execution/state.js';
import type { GraphNode } from '../domain/graph/execution-graph.js';
import type { CompletedNode, RunListener } from './graph-runner.js';
import { AppendRefusedError, type ExecutionEventWriter } from './execution-event-writer.js';
import { DEFAULT_EVENT_SIZE_LIMITS, prepareForStorage, type EventStorage } from './event-values.js';
import { GraphSnapshotRecords, type GraphRecording } from './graph-snapshot-records.js';

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

/**
 * How long such a node may run before its start is recorded on its own. One that ends sooner
 * records a single event, its NodeCompleted or NodeFailed carrying the start (fewer rows to write,
 * the same record); a longer one shows as running while it runs.
 */
const CARRIED_START_MAX_MS = 1000;

/** A start not recorded yet: it goes with the node's end, or on its own after `carriedStartMaxMs`. */
interface UnrecordedStart {
  command: Extract<ExecutionCommand, { type: 'StartNode' }>;
  timer: NodeJS.Timeout;
}

/**
 * Events a run holds back from the writer (`hold`): all of them go in one append, so a short
 * synchronous run is written by one commit, its read-model rows once.
 */
interface HeldEvents {
  /** Each command's events, in order. */
  commands: NewEvent[][];
  /** The stream's version before the first of them. */
  expected: number | 'no_stream';
  /** Settles with the append of all of them. */
  written: PromiseWithResolvers<void>;
  /** Resolves once the run is on record: all held events, or (when the rest was refused) its start. */
  recorded: PromiseWithResolvers<void>;
  /** What the first append requires of other streams (the process at the revision the run used). */
  requires: readonly StreamAtVersion[] | undefined;
  timer: NodeJS.Timeout;
}

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
  private held: HeldEvents | null = null;
  /** Resolves once the run is on record (see `recorded`). */
  private onRecord: Promise<void> = Promise.resolve();
  /** True from `hold` until the run is on record: it has no lease yet, nor any row. */
  private unrecorded = false;
  /** Starts of running nodes that touch nothing outside, by node run key, waiting for their end. */
  private readonly unrecordedStarts = new Map<string, UnrecordedStart>();
  /** The run's graph, to be recorded in the commit of its start (unless known on record). */
  private graphRecording: GraphRecording | undefined;

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
    private readonly carriedStartMaxMs = CARRIED_START_MAX_MS,
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
    // Both throw EventTooLargeError before the state or the stream changes; the graph is measured
    // first, since preparing the events starts their values' blob writes.
    if (command.type === 'StartExecution') {
      const graphs = this.storage.graphs ?? new GraphSnapshotRecords();
      this.graphRecording = graphs.recordingFor(command.data, command.data.graphSnapshot, this.metadata);
    }
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
    if (this.held && blobWrites.length === 0) {
      this.held.commands.push(stored);
      return this.held.written.promise;
    }
    // The run's first command, with values on their way to blob storage: its own append ends the
    // hold, carries what the hold requires, and settles it (an empty append first would commit
    // the requirement alone and let the start follow without it).
    const emptyHold = this.held?.commands.length === 0 ? this.endEmptyHold() : undefined;
    // Values on their way to blob storage are written in order behind the held events.
    this.release();
    const appended = this.appendInOrder(stored, expected, blobWrites, emptyHold?.requires);
    if (emptyHold) {
      appended.then(
        () => {
          emptyHold.written.resolve();
          emptyHold.recorded.resolve();
        },
        (error: unknown) => {
          emptyHold.written.reject(error);
          emptyHold.recorded.reject(error);
        },
      );
    }
    return appended;
  }

  private appendInOrder(
    stored: NewEvent[],
    expected: number | 'no_stream',
    blobWrites: Promise<void>[],
    requires: readonly StreamAtVersion[] | undefined,
  ): Promise<void> {
    const streamId = executionStreamId(this.executionId);
    const options = { lazy: true, requires };
    if (blobWrites.length === 0 && this.appendGate === null) return this.write(streamId, stored, expected, options);
    const ready = Promise.all([this.appendGate, ...blobWrites]);
    const appended = ready.then(() => this.write(streamId, stored, expected, options));
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

  /**
   * Queues an append on the writer; the one that holds the run's start takes the recording of its
   * graph along, into the same commit (before it), and the graph is known on record once it committed.
   */
  private write(
    streamId: string,
    events: NewEvent[],
    expected: number | 'no_stream',
    options: { lazy?: boolean; requires?: readonly StreamAtVersion[] },
  ): Promise<void> {
    const recording = this.graphRecording;
    if (!recording || !events.some((event) => event.type === 'ExecutionStarted'))
      return this.writer.append(streamId, events, expected, options);
    const written = this.writer.append(streamId, events, expected, { ...options, before: recording.append });
    written.then(
      () => {
        recording.committed();
        this.graphRecording = undefined;
      },
      () => undefined,
    );
    return written;
  }

  /**
   * Holds the run's events back from the writer for up to `ms` (call before the first command):
   * a synchronous run of nodes that touch nothing outside (`DEFERRABLE_NODE_TYPES`) usually ends
   * first and is then written by one commit, its start, nodes and end together, its read-model
   * rows once. Nothing about it is on record meanwhile: a crash loses a run no one was told of
   * (its caller gets no answer) that made no call outside, and no node of it runs again. Ends
   * early when the run flushes (its end, a node with effects outside, a cancel, a stop), when a
   * value goes to blob storage, or when `recorded()` is awaited. `requires`: other streams' versions
   * the run's first append commits only with (`StreamAppend.requires`); a held run's first append
   * carries its start, so nothing of a run that fails them is on record and no node of it made a
   * call outside (such a node waits for its start to be recorded).
   */
  hold(ms: number, requires?: readonly StreamAtVersion[]): void {
    if (this.held || this.version !== 0) throw new Error("hold() goes before the run's first command");
    const written = Promise.withResolvers<void>();
    const recorded = Promise.withResolvers<void>();
    // Either may go unobserved: their failures reach the run through its pending writes.
    written.promise.catch(() => undefined);
    recorded.promise.catch(() => undefined);
    this.onRecord = recorded.promise;
    this.unrecorded = true;
    // A run that could not be put on record stays off it (no lease to renew); its error reaches
    // the caller through `recorded()` and the run through its pending writes.
    recorded.promise.then(
      () => (this.unrecorded = false),
      () => undefined,
    );
    const timer = setTimeout(() => this.release(true), ms);
    this.held = { commands: [], expected: 'no_stream', written, recorded, timer, requires };
  }

  /** True while the run is held or its held events are being written: nothing of it is on record yet. */
  get notOnRecord(): boolean {
    return this.unrecorded;
  }

  /** Like `recorded()`, without ending the hold. */
  get whenRecorded(): Promise<void> {
    return this.onRecord;
  }

  /**
   * Resolves once the run is on record (its held events committed, or at least its start when the
   * database refused the rest); rejects when they could not be written. At once for a run not held.
   */
  async recorded(): Promise<void> {
    this.release();
    this.writer.expedite();
    await this.onRecord;
  }

  /** Drops what is held, unwritten (a start that failed before the run was launched). */
  discard(): void {
    const held = this.held;
    if (!held) return;
    this.held = null;
    clearTimeout(held.timer);
    held.written.resolve();
    held.recorded.resolve();
  }

  /** Ends a hold that holds nothing yet, without an append: the caller's append settles it. */
  private endEmptyHold(): HeldEvents {
    const held = this.held as HeldEvents;
    this.held = null;
    clearTimeout(held.timer);
    return held;
  }

  /** Hands the held events to the writer as one append (lazily when the hold ran out). */
  private release(lazy = false): void {
    const held = this.held;
    if (!held) return;
    this.held = null;
    clearTimeout(held.timer);
    // Later appends queue behind these: when they fail, the run learns why from them first.
    const gate = held.written.promise.then(
      () => undefined,
      () => undefined,
    );
    this.appendGate = gate;
    void gate.then(() => this.appendGate === gate && (this.appendGate = null));
    const streamId = executionStreamId(this.executionId);
    this.write(streamId, held.commands.flat(), held.expected, { lazy, requires: held.requires }).then(
      () => {
        held.written.resolve();
        held.recorded.resolve();
      },
      (error: unknown) => {
        // More than the start alone: the start goes on record and the run fails there (failRefused).
        if (error instanceof AppendRefusedError && held.commands.length > 1) void this.appendOneByOne(streamId, held);
        else {
          held.written.reject(error);
          held.recorded.reject(error);
        }
      },
    );
  }

  /**
   * The database refused a held event (a value jsonb cannot hold): each command's events are
   * appended on their own, as if never held, so the refusal names the command at fault and what
   * came before it, the start at least, is on record (the run then fails on record, `failRefused`).
   */
  private async appendOneByOne(streamId: string, held: HeldEvents): Promise<void> {
    let version = held.expected === 'no_stream' ? 0 : held.expected;
    let started = false;
    // The acceptance and the start go together (as unheld), so a refused start leaves no lone acceptance.
    const startsAt = held.commands.findIndex((events) => events.some((event) => event.type === 'ExecutionStarted'));
    const units = [held.commands.slice(0, startsAt + 1).flat(), ...held.commands.slice(startsAt + 1)].filter(
      (events) => events.length > 0,
    );
    for (const [index, events] of units.entries()) {
      try {
        const requires = index === 0 ? held.requires : undefined;
        await this.write(streamId, events, version === 0 ? 'no_stream' : version, { requires });
      } catch (error) {
        held.written.reject(error);
        if (started) held.recorded.resolve();
        else held.recorded.reject(error);
        return;
      }
      version += events.length;
      started ||= events.some((event) => event.type === 'ExecutionStarted');
    }
    held.written.resolve();
    held.recorded.resolve();
  }

  /** Resolves when every event so far is committed (written at once now); rejects with the first write failure. */
  async flushed(): Promise<void> {
    this.release();
    this.writer.expedite();
    await Promise.all(this.pendingWrites);
    if (this.writeFailure !== null) {
      throw this.writeFailure instanceof Error
        ? this.writeFailure
        : new Error('execution write failed', { cause: this.writeFailure });
    }
  }

  /** Nodes running now whose start is not recorded yet (they count as running all the same). */
  get unrecordedStartCount(): number {
    return this.unrecordedStarts.size;
  }

  /**
   * Forgets the starts still waiting for their node's end: called once the graph run is over, when
   * a node still running (the run failed or was aborted around it) will report nothing more.
   */
  forgetUnrecordedStarts(): void {
    for (const { timer } of this.unrecordedStarts.values()) clearTimeout(timer);
    this.unrecordedStarts.clear();
  }

  /** Records a node's start on its own: the node runs longer than `carriedStartMaxMs`. */
  private recordStart(key: string): void {
    const waiting = this.takeUnrecordedStart(key);
    if (!waiting) return;
    try {
      this.execute(waiting.command);
    } catch {
      // The execution ended meanwhile (a cancel, a timeout): there is no run left to show.
    }
  }

  /** The start the node's end carries (removed only once that end is recorded), or none. */
  private startToCarry(key: string): NodeStart | undefined {
    const waiting = this.unrecordedStarts.get(key);
    if (!waiting) return undefined;
    const { nodeName, nodeType, inputFrom } = waiting.command.data;
    return { nodeName, nodeType, inputFrom, startedAt: waiting.command.metadata.now };
  }

  private takeUnrecordedStart(key: string): UnrecordedStart | undefined {
    const waiting = this.unrecordedStarts.get(key);
    if (!waiting) return undefined;
    clearTimeout(waiting.timer);
    this.unrecordedStarts.delete(key);
    return waiting;
  }

  /** The graph runner's listener: each step becomes a command on this run. */
  listener(): RunListener {
    // Each event carries the time the graph runner saw (a wait's deadline counts from the recorded
    // start, so the start must be the very time the run used, not a later reading of the clock).
    const where = (iteration: IterationPath) => (iteration.length > 0 ? { iteration } : {});
    const recordNow = (node: GraphNode): void => {
      if (!DEFERRABLE_NODE_TYPES.has(node.type)) this.writer.expedite();
    };
    /** Decides the node's end, carrying its start when that is not recorded yet. */
    const end = (node: GraphNode, iteration: IterationPath, command: (start?: NodeStart) => ExecutionCommand): void => {
      const key = runKey(node.id, iteration);
      const start = this.startToCarry(key);
      // A refused end (too large) leaves the start waiting: the NodeFailed that follows carries it.
      this.execute(command(start));
      this.takeUnrecordedStart(key);
      recordNow(node);
    };
    return {
      nodeStarted: (node: GraphNode, _input, iteration, at, origin) => {
        const command = {
          type: 'StartNode',
          data: { nodeId: node.id, nodeName: node.label, nodeType: node.type, ...origin, ...where(iteration) },
          metadata: { now: at },
        } as const;
        // A loop's item may be large (blob storage, size limits): measured and recorded with the start, as before.
        if (DEFERRABLE_NODE_TYPES.has(node.type) && origin.loopItem === undefined) {
          const key = runKey(node.id, iteration);
          const timer = setTimeout(() => this.recordStart(key), this.carriedStartMaxMs);
          this.unrecordedStarts.set(key, { command, timer });
          return;
        }
        this.execute(command);
        if (DEFERRABLE_NODE_TYPES.has(node.type)) return;
        return this.flushed();
      },
      nodeCompleted: (node: GraphNode, result: CompletedNode, iteration, at, durationMs) =>
        end(node, iteration, (start) => ({
          type: 'CompleteNode',
          data: {
            nodeId: node.id,
            outputData: result.output,
            handles: [...result.handles],
            ...(result.tokenUsage ? { tokenUsage: result.tokenUsage } : {}),
            durationMs,
            ...where(iteration),
            ...(start ? { start } : {}),
          },
          metadata: { now: at },
        })),
      nodeFailed: (node: GraphNode, error, iteration, at, durationMs) =>
        end(node, iteration, (start) => ({
          type: 'FailNode',
          data: {
            nodeId: node.id,
            error: bounded(error),
            durationMs,
            ...where(iteration),
            ...(start ? { start } : {}),
          },
          metadata: { now: at },
        })),
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
