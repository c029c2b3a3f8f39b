/** Polls `condition` until it holds (or `timeoutMs` passes); the test then asserts on the state itself. */
export async function waitUntil(
  condition: () => boolean | Promise<boolean>,
  timeoutMs = 10_000,
  everyMs = 20,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) return;
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
