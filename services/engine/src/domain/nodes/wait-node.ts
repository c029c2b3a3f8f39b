import type { WaitNodeConfig } from '@weft/contracts';
import { NodeFailure, type NodeExecutor } from './node-executor.js';

/**
 * Waits `seconds` from when the node FIRST started, or until `until`. Counting from the first
 * start (kept in the execution's events) makes the timer durable: a resumed execution waits
 * only the time that is left.
 */
export function waitDeadline(config: WaitNodeConfig, firstStartedAt: Date): Date {
  if (config.until !== undefined) {
    const until = new Date(config.until);
    if (Number.isNaN(until.getTime())) throw new NodeFailure(`wait until "${config.until}" is not an ISO time`);
    return until;
  }
  const seconds = Number(config.seconds);
  if (!Number.isFinite(seconds) || seconds < 0) throw new NodeFailure(`wait seconds must be a number >= 0`);
  return new Date(firstStartedAt.getTime() + seconds * 1000);
}

export const waitNodeExecutor: NodeExecutor<WaitNodeConfig> = {
  type: 'waitNode',
  async execute(config, _input, context) {
    const deadline = waitDeadline(config, context.firstStartedAt);
    if (deadline.getTime() > context.now().getTime()) await context.sleepUntil(deadline);
    return { output: { waitedUntil: deadline.toISOString() } };
  },
};
