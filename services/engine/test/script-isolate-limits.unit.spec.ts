import type { IsolateLimits } from '../src/adapters/nodes/script-isolate-pool.js';
import { ScriptError, ScriptSandbox } from '../src/adapters/nodes/script-sandbox.js';

/**
 * Script isolates are bounded per engine: memoryMb is capped (WEFT_SCRIPT_MAX_MEMORY_MB), one
 * isolate per organization whatever its memoryMb, at most WEFT_SCRIPT_MAX_WARM_ISOLATES kept (the
 * least recently used idle one goes), and the heap limits of live isolates stay within
 * WEFT_SCRIPT_MEMORY_BUDGET_MB: beyond it a run fails at once with a clear error.
 */
describe('script isolate limits', () => {
  const sandboxes: ScriptSandbox[] = [];
  const sandboxWith = (isolates: Partial<IsolateLimits>): ScriptSandbox => {
    const sandbox = new ScriptSandbox({ isolates });
    sandboxes.push(sandbox);
    return sandbox;
  };
  afterEach(() => {
    for (const sandbox of sandboxes.splice(0)) sandbox.dispose();
  });
  const run = (
    sandbox: ScriptSandbox,
    organizationId: string,
    code: string,
    extra: { memoryMb?: number; signal?: AbortSignal } = {},
  ) =>
    sandbox.run({
      organizationId,
      code,
      input: { x: 21 },
      timeoutMs: 10_000,
      memoryMb: extra.memoryMb ?? 16,
      signal: extra.signal,
    });
  /** A run that holds its isolate until `stop` aborts it. */
  const holding = (sandbox: ScriptSandbox, organizationId: string) => {
    const controller = new AbortController();
    const done = run(sandbox, organizationId, 'await new Promise(() => {});', { signal: controller.signal }).catch(
      (error: unknown) => error,
    );
    return { stop: () => controller.abort(), done };
  };

  test('memoryMb above the engine limit fails with a message that names the limit', async () => {
    const sandbox = sandboxWith({ maxMemoryMb: 64 });
    await expect(run(sandbox, 'org-a', 'return 1', { memoryMb: 128 })).rejects.toThrow(
      new ScriptError("memoryMb 128 is above this engine's limit of 64 MB (WEFT_SCRIPT_MAX_MEMORY_MB)"),
    );
    expect(sandbox.liveMemoryMb).toBe(0);
    expect(await run(sandbox, 'org-a', 'return 2', { memoryMb: 64 })).toBe(2);
  });

  test('one isolate per organization: a larger memoryMb replaces it instead of adding one', async () => {
    const sandbox = sandboxWith({});
    expect(await run(sandbox, 'org-a', 'return input.x', { memoryMb: 16 })).toBe(21);
    expect(await run(sandbox, 'org-a', 'return input.x * 2', { memoryMb: 32 })).toBe(42);
    expect(await run(sandbox, 'org-a', 'return input.x + 1', { memoryMb: 16 })).toBe(22);
    expect(sandbox.warmOrganizations()).toEqual(['org-a']);
    expect(sandbox.liveMemoryMb).toBe(32);
  });

  test('warm isolates are capped; the least recently used idle one is evicted', async () => {
    const sandbox = sandboxWith({ maxWarmIsolates: 2 });
    await run(sandbox, 'org-a', 'return 1');
    await run(sandbox, 'org-b', 'return 1');
    await run(sandbox, 'org-a', 'return 1');
    await run(sandbox, 'org-c', 'return 1');
    expect(sandbox.warmOrganizations()).toEqual(['org-a', 'org-c']);
    expect(sandbox.liveMemoryMb).toBe(32);
  });

  test('the memory budget holds: busy isolates are never evicted, and a run beyond it fails clearly until one frees', async () => {
    const sandbox = sandboxWith({ memoryBudgetMb: 40 });
    const a = holding(sandbox, 'org-a');
    const b = holding(sandbox, 'org-b');
    await expect(run(sandbox, 'org-c', 'return 1')).rejects.toThrow(
      /^no script capacity on this engine: busy isolates hold 32 of 40 MB/,
    );
    expect(sandbox.liveMemoryMb).toBe(32);
    a.stop();
    expect(await a.done).toEqual(new ScriptError('script cancelled'));
    // org-a's isolate is idle now: it makes room for org-c, while org-b's busy one stays.
    expect(await run(sandbox, 'org-c', 'return input.x')).toBe(21);
    expect(sandbox.warmOrganizations()).toEqual(['org-b', 'org-c']);
    expect(sandbox.liveMemoryMb).toBe(32);
    b.stop();
    await b.done;
  });

  test("one organization's script exhausting its isolate does not affect another organization's run", async () => {
    const sandbox = sandboxWith({ memoryBudgetMb: 64 });
    const bomb = 'const hog = []; for (;;) hog.push(new Array(100000).fill("x"));';
    const steady = 'let total = 0; for (let i = 0; i < 2000000; i++) total += i % 7; return { total, x: input.x };';
    const [exhausted, other] = await Promise.allSettled([
      run(sandbox, 'org-greedy', bomb, { memoryMb: 16 }),
      run(sandbox, 'org-steady', steady, { memoryMb: 16 }),
    ]);
    expect(exhausted).toEqual({
      status: 'rejected',
      reason: new ScriptError('script exceeded its memory limit of 16 MB'),
    });
    expect(other).toEqual({ status: 'fulfilled', value: { total: expect.any(Number), x: 21 } });
    // The exhausted isolate is gone and its memory released; the other organization's stays warm.
    expect(sandbox.warmOrganizations()).toEqual(['org-steady']);
    expect(sandbox.liveMemoryMb).toBe(16);
    expect(await run(sandbox, 'org-greedy', 'return input.x')).toBe(21);
  });
});
