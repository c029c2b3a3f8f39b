import type { LoopNodeConfig } from '@weft/contracts';
import { NodeFailure, type NodeExecutor } from './node-executor.js';

/** Default of WEFT_LOOP_MAX_ITEMS: a loop runs its body, and records its events, once per item. */
export const DEFAULT_LOOP_MAX_ITEMS = 10_000;

/**
 * Runs the body once per item (`concurrency` at a time) and fires `output` with the body's sink
 * outputs in item order. The scheduler runs the body; this node only plans and collects. More
 * than `maxItems` items fail the node before any body runs.
 */
export const createLoopNodeExecutor = (maxItems: number = DEFAULT_LOOP_MAX_ITEMS): NodeExecutor<LoopNodeConfig> => ({
  type: 'loopNode',
  async execute(config, _input, context) {
    const items = config.items;
    if (!Array.isArray(items)) throw new NodeFailure(`loop items must be an array, got ${typeof items}`);
    if (items.length > maxItems) {
      throw new NodeFailure(`loop has ${items.length} items, more than the ${maxItems} allowed (WEFT_LOOP_MAX_ITEMS)`);
    }
    const concurrency = Math.max(1, Math.min(Number(config.concurrency ?? 1) || 1, 100));
    const results: Record<string, unknown>[] = new Array<Record<string, unknown>>(items.length);
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < items.length) {
        const index = next++;
        results[index] = await context.runLoopBody(items[index], index);
      }
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
    return { output: { results }, handles: ['output'] };
  },
});

export const loopNodeExecutor = createLoopNodeExecutor();
