/**
 * Waiters taken in turn by owner (an organization): each owner's waiters in order, the owners
 * round-robin. One tenant that queues a hundred OCR pages or mappings makes another tenant's one
 * job wait for at most one of them per free worker, not for all hundred.
 */
export class FairQueue<T> {
  /** Map order is the turn order: an owner served goes to the back while it still waits. */
  private readonly queues = new Map<string, T[]>();
  private count = 0;

  get size(): number {
    return this.count;
  }

  push(owner: string, item: T): void {
    const queue = this.queues.get(owner);
    if (queue) queue.push(item);
    else this.queues.set(owner, [item]);
    this.count++;
  }

  /** The next owner's first waiter. */
  shift(): T | undefined {
    const next = this.queues.entries().next();
    if (next.done) return undefined;
    const [owner, queue] = next.value;
    const item = queue.shift()!;
    this.queues.delete(owner);
    if (queue.length > 0) this.queues.set(owner, queue);
    this.count--;
    return item;
  }

  /** Takes `item` out (a waiter that gave up); false when it was not waiting. */
  remove(owner: string, item: T): boolean {
    const queue = this.queues.get(owner);
    const at = queue?.indexOf(item) ?? -1;
    if (!queue || at < 0) return false;
    queue.splice(at, 1);
    if (queue.length === 0) this.queues.delete(owner);
    this.count--;
    return true;
  }

  /** Every waiter, emptying the queue. */
  drain(): T[] {
    const items = [...this.queues.values()].flat();
    this.queues.clear();
    this.count = 0;
    return items;
  }
}
