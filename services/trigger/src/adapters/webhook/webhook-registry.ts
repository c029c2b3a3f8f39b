import type { ListenerContext } from '../../application/listener-port.js';

/** The webhook input nodes of running processes on this replica: what the webhook route may fire. */
export class WebhookRegistry {
  private readonly byProcess = new Map<string, Map<string, ListenerContext>>();

  add(context: ListenerContext): void {
    const nodes = this.byProcess.get(context.processId) ?? new Map<string, ListenerContext>();
    nodes.set(context.nodeId, context);
    this.byProcess.set(context.processId, nodes);
  }

  remove(context: ListenerContext): void {
    const nodes = this.byProcess.get(context.processId);
    if (nodes?.get(context.nodeId) !== context) return;
    nodes.delete(context.nodeId);
    if (nodes.size === 0) this.byProcess.delete(context.processId);
  }

  /** The registered webhook nodes of a process, in registration order. */
  of(processId: string): ListenerContext[] {
    return [...(this.byProcess.get(processId)?.values() ?? [])];
  }
}
