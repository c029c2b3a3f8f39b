import type { DecryptedConnection, FileReference } from '@weft/contracts';
import type { EventStore } from '@weft/event-store';
import { createLogger } from '@weft/observability';
import type { ListenerContext, ListenerStatusUpdate } from '../../src/application/listener-port.js';
import { firingExecutionId } from '../../src/domain/execution-id.js';
import type { MailTestClock } from './mail-clock.js';

export interface Firing {
  dedupeKey: string;
  executionId: string;
  input: Record<string, unknown>;
}

/**
 * What a trigger replica's collaborators saw: every `fire` (the engine starts one execution per
 * execution id, as `started` does here), stored files, connection updates and status reports.
 */
export class MailTestWorld {
  readonly firings: Firing[] = [];
  readonly started = new Map<string, Firing>();
  readonly files = new Map<string, { name: string; content: Uint8Array; contentType: string }>();
  readonly connections = new Map<string, DecryptedConnection>();
  readonly connectionUpdates: { connectionId: string; data: Record<string, unknown> }[] = [];

  addConnection(connection: Omit<DecryptedConnection, 'organizationId'>): void {
    this.connections.set(connection.id, { ...connection, organizationId: 'org-1' });
  }

  firedKeys(): string[] {
    return this.firings.map((firing) => firing.dedupeKey);
  }
}

export interface ReplicaOptions {
  world: MailTestWorld;
  store: EventStore;
  clock: MailTestClock;
  processId: string;
  nodeId: string;
  config: Record<string, unknown>;
  /** Replaces `fire` (to crash a replica between its claim and its start). */
  fire?: ListenerContext['fire'];
}

export interface Replica {
  context: ListenerContext;
  reports: ListenerStatusUpdate[];
  abort(): void;
}

/** One trigger replica's listener context over a real event store; `fire` records like the engine dedupes. */
export function replicaContext(options: ReplicaOptions): Replica {
  const { world } = options;
  const abort = new AbortController();
  const reports: ListenerStatusUpdate[] = [];
  const fire: ListenerContext['fire'] = async (input, fireOptions) => {
    const executionId = firingExecutionId(options.processId, options.nodeId, fireOptions.dedupeKey);
    const firing = { dedupeKey: fireOptions.dedupeKey, executionId, input: input as Record<string, unknown> };
    world.firings.push(firing);
    if (!world.started.has(executionId)) world.started.set(executionId, firing);
    return { executionId };
  };
  const context: ListenerContext = {
    organizationId: 'org-1',
    processId: options.processId,
    nodeId: options.nodeId,
    nodeLabel: 'Mail',
    config: options.config,
    fire: options.fire ?? fire,
    report: (update) => reports.push(update),
    connection: (connectionId) => {
      const connection = world.connections.get(connectionId);
      return connection
        ? Promise.resolve(structuredClone(connection))
        : Promise.reject(new Error(`no connection ${connectionId}`));
    },
    updateConnectionData: (connectionId, data) => {
      world.connectionUpdates.push({ connectionId, data });
      const connection = world.connections.get(connectionId)!;
      world.connections.set(connectionId, { ...connection, data });
      return Promise.resolve();
    },
    storeFile: (name, content, contentType): Promise<FileReference> => {
      // Keys like the supervisor's: <organization>/triggers/<process>/<node>/<file>.
      const id = `file-${world.files.size + 1}`;
      world.files.set(id, { name, content, contentType });
      return Promise.resolve({
        name,
        url: `weft-blob://org-1/triggers/${options.processId}/${options.nodeId}/${id}`,
        size: content.byteLength,
        contentType,
      });
    },
    store: options.store,
    signal: abort.signal,
    now: () => options.clock.now(),
    logger: createLogger('mail-test', { level: 'silent' }),
  };
  return { context, reports, abort: () => abort.abort() };
}

/** The fire of a replica that dies right after its claim: nothing starts, the claim stays. */
export const crashingFire: ListenerContext['fire'] = () =>
  Promise.reject(new Error('replica crashed before the start'));
