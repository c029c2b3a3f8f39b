import { NodeFailure } from '../../domain/nodes/node-executor.js';

/**
 * Runs work that cannot itself be interrupted (a native inference) and settles as soon as the
 * execution is cancelled or the timeout passes; the work's late result is dropped.
 */
export async function raceAbort<T>(
  signal: AbortSignal,
  timeoutMs: number,
  timeoutMessage: string,
  work: () => Promise<T>,
): Promise<T> {
  signal.throwIfAborted();
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const stopped = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new NodeFailure(timeoutMessage)), timeoutMs);
    onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
  });
  const running = work();
  running.catch(() => undefined);
  try {
    return await Promise.race([running, stopped]);
  } finally {
    clearTimeout(timer);
    if (onAbort) signal.removeEventListener('abort', onAbort);
  }
}
