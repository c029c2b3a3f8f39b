/** Polls `condition` until it holds; throws when `timeoutMs` passes first, so a test never goes on without it. */
export async function waitUntil(
  condition: () => boolean | Promise<boolean>,
  timeoutMs = 10_000,
  everyMs = 20,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline)
      throw new Error(`waitUntil: condition still false after ${timeoutMs} ms: ${String(condition)}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
