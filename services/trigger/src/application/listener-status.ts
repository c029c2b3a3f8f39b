import type { ListenerState, ListenerStatusUpdate } from './listener-port.js';

/** One input node's listener as `GET /processes/:id/listeners` shows it (snake_case like process records). */
export interface ListenerStatus {
  node_id: string;
  label: string;
  trigger_type: string;
  state: ListenerState;
  last_success_at: string | null;
  last_error: { message: string; at: string } | null;
  next_run_at: string | null;
}

/** The listeners' statuses on this replica, per process and input node. */
export class ListenerStatusBoard {
  private readonly byProcess = new Map<string, Map<string, ListenerStatus>>();

  open(processId: string, node: { id: string; label: string; triggerType: string }): void {
    const nodes = this.byProcess.get(processId) ?? new Map<string, ListenerStatus>();
    this.byProcess.set(processId, nodes);
    const earlier = nodes.get(node.id);
    nodes.set(node.id, {
      node_id: node.id,
      label: node.label,
      trigger_type: node.triggerType,
      state: 'starting',
      last_success_at: earlier?.last_success_at ?? null,
      last_error: earlier?.last_error ?? null,
      next_run_at: null,
    });
  }

  update(processId: string, nodeId: string, update: ListenerStatusUpdate): void {
    const status = this.byProcess.get(processId)?.get(nodeId);
    if (!status) return;
    if (update.state !== undefined) status.state = update.state;
    if (update.lastSuccessAt !== undefined) status.last_success_at = update.lastSuccessAt;
    if (update.lastError !== undefined) status.last_error = update.lastError;
    if (update.nextRunAt !== undefined) status.next_run_at = update.nextRunAt;
  }

  /** Marks the node's listener stopped (its last success and error stay visible). */
  close(processId: string, nodeId: string): void {
    this.update(processId, nodeId, { state: 'stopped', nextRunAt: null });
  }

  forget(processId: string, nodeId?: string): void {
    if (nodeId === undefined) this.byProcess.delete(processId);
    else this.byProcess.get(processId)?.delete(nodeId);
  }

  of(processId: string, nodeId: string): ListenerStatus | undefined {
    const status = this.byProcess.get(processId)?.get(nodeId);
    return status ? { ...status } : undefined;
  }
}
