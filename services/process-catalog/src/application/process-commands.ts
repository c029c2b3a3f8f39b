import { conflict } from '@weft/contracts';
import { WrongExpectedVersionError, type EventStore, type NewEvent } from '@weft/event-store';
import type { ProcessCommand } from '../domain/process/commands.js';
import { decide } from '../domain/process/decide.js';
import { processStreamId, type ProcessEvent } from '../domain/process/events.js';
import { foldProcess, type ProcessState } from '../domain/process/state.js';
import { parseJson } from '../projections/process-projection.js';
import { toProcessEvent } from '../projections/stored-process-event.js';
import type { Caller, Runtime } from './caller.js';
import { assertNoNewConnectionReferences } from './connection-references.js';
import { assertOrganizationAccess, assertProcessAccess } from './process-access.js';

type Without<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
export type ProcessCommandInput = Without<ProcessCommand, 'metadata'>;

export interface CommandResult {
  /** The stream version after the command: the record's revision. */
  revision: number;
  events: ProcessEvent[];
  state: ProcessState;
}

/** Loads a process stream, lets the decider decide, appends with the loaded version. */
export class ProcessCommands {
  constructor(
    private readonly store: EventStore,
    private readonly runtime: Runtime,
  ) {}

  /**
   * The read-model row is the snapshot (the inline projection commits with every append), and
   * the stream's tail after its revision is folded on top, so a long history is never re-read.
   */
  async load(processId: string): Promise<{ state: ProcessState; version: number }> {
    const row = await this.store.db
      .selectFrom('catalog_processes')
      .select(['state', 'revision'])
      .where('id', '=', processId)
      .executeTakeFirst();
    const snapshotVersion = row ? Number(row.revision) : 0;
    const tail = await this.store.readStream(processStreamId(processId), { fromVersion: snapshotVersion + 1 });
    const events = tail.flatMap((event) => toProcessEvent(event) ?? []);
    const from = row ? (parseJson(row.state) as ProcessState) : undefined;
    return { state: foldProcess(events, from), version: tail.at(-1)?.streamVersion ?? snapshotVersion };
  }

  /**
   * `expectedRevision` comes from If-Match: a stale one answers 409 before deciding. Without it,
   * an edit that races another still gets 409 from the append, never a lost update.
   */
  async execute(
    processId: string,
    command: ProcessCommandInput,
    caller: Caller,
    expectedRevision?: number,
  ): Promise<CommandResult> {
    const { state, version } = await this.load(processId);
    if (command.type === 'CreateProcess') assertOrganizationAccess(command.data.organizationId, caller);
    else assertProcessAccess(state.status === 'active' ? state : undefined, caller);
    if (expectedRevision !== undefined && expectedRevision !== version) {
      throw conflict(`process ${processId} is at revision ${version}, not ${expectedRevision}; reload and retry`, {
        currentRevision: version,
      });
    }
    const metadata = { now: this.runtime.now(), actorId: caller.actor.userId, actorName: caller.actor.userName };
    const events = decide({ ...command, metadata }, state);
    if (events.length === 0) return { revision: version, events, state };
    const next = foldProcess(events, state);
    // A restored version is this process's own earlier graph, connections included.
    if (command.type !== 'RestoreVersion') assertNoNewConnectionReferences(state.nodes, next.nodes, caller);
    const organizationId = command.type === 'CreateProcess' ? command.data.organizationId : state.organizationId;
    const newEvents: NewEvent[] = events.map((event) => ({
      type: event.type,
      data: event.data,
      metadata: {
        actorId: caller.actor.userId,
        actorName: caller.actor.userName,
        organizationId,
        processId,
        ...(caller.correlationId ? { correlationId: caller.correlationId } : {}),
        ...(caller.traceId ? { traceId: caller.traceId } : {}),
      },
    }));
    try {
      const result = await this.store.append(processStreamId(processId), newEvents, {
        expectedVersion: version === 0 ? 'no_stream' : version,
      });
      return { revision: result.nextExpectedVersion, events, state: next };
    } catch (error) {
      if (error instanceof WrongExpectedVersionError) {
        throw conflict(`process ${processId} was changed concurrently; reload and retry`, {
          currentRevision: error.actual,
        });
      }
      throw error;
    }
  }
}
