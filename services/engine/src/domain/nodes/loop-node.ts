import type { LoopNodeConfig } from '@weft/contracts';
import { NodeFailure, type NodeExecutor } from './node-executor.js';

/**
 * Runs the body once per item (`concurrency` at a time) and fires `output` with the body's sink
 * outputs in item order. The scheduler runs the body; this node only plans and collects.
 */
export const loopNodeExecutor: NodeExecutor<LoopNodeConfig> = {
  type: 'loopNode',
  async execute(config, _input, context) {
    const items = config.items;
    if (!Array.isArray(items)) throw new NodeFailure(`loop items must be an array, got ${typeof items}`);
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
};
