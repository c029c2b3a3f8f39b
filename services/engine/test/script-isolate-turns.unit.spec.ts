import { ScriptSandbox } from '../src/adapters/nodes/script-sandbox.js';

/**
 * An organization's runs take turns to set up on its isolate (WEFT_SCRIPT_RUNS_PER_ISOLATE):
 * compile, fresh context, input. A run gives its turn back once its code is queued on the
 * isolate, so code awaiting a promise that never settles holds none; a run settled while it waits
 * leaves the line; the turns survive the isolate being replaced; `dispose` ends the waits.
 */
describe('script isolate turns', () => {
  const sandboxes: ScriptSandbox[] = [];
  const sandboxWith = (runsPerIsolate?: number): ScriptSandbox => {
    const sandbox = new ScriptSandbox({ isolates: runsPerIsolate ? { runsPerIsolate } : {} });
    sandboxes.push(sandbox);
    return sandbox;
  };
  afterEach(() => {
    for (const sandbox of sandboxes.splice(0)) sandbox.dispose();
  });
  const NEVER = 'await new Promise(() => {}); return 1;';
  const runOn =
    (sandbox: ScriptSandbox, organizationId = 'org-a') =>
    (code: string, options: { timeoutMs?: number; memoryMb?: number; signal?: AbortSignal } = {}) =>
      sandbox
        .run({
          organizationId,
          code,
          input: { x: 21 },
          timeoutMs: options.timeoutMs ?? 10_000,
          memoryMb: options.memoryMb ?? 16,
          signal: options.signal,
        })
        .catch((error: Error) => `ERR ${error.message}`);

  test('runs beyond the turns wait in line, all finish, and nothing is left behind', async () => {
    const sandbox = sandboxWith(1);
    const run = runOn(sandbox);
    const runs = Array.from({ length: 5 }, (_, i) => run(`return input.x + ${i};`));
    expect(sandbox.runsWaitingForTurn).toBe(4);
    expect(await Promise.all(runs)).toEqual([21, 22, 23, 24, 25]);
    expect(sandbox.runsWaitingForTurn).toBe(0);
    expect(sandbox.organizationsTakingTurns).toBe(0);
  });

  test('code that awaits a promise that never settles holds no turn', async () => {
    const sandbox = sandboxWith(); // the default, 4
    const run = runOn(sandbox);
    const stop = new AbortController();
    const parked = Array.from({ length: 4 }, () => run(NEVER, { timeoutMs: 300_000, signal: stop.signal }));
    expect(await run('return 1;', { timeoutMs: 2000 })).toBe(1);
    stop.abort();
    expect(await Promise.all(parked)).toEqual(Array(4).fill('ERR script cancelled'));
  });

  test('a run cancelled while it waits leaves the line; the others run', async () => {
    const sandbox = sandboxWith(1);
    const run = runOn(sandbox);
    const cancel = new AbortController();
    const first = run('return input.x;');
    const cancelled = run('return 0;', { signal: cancel.signal });
    const third = run('return input.x * 2;');
    cancel.abort();
    expect(await cancelled).toBe('ERR script cancelled');
    expect(await Promise.all([first, third])).toEqual([21, 42]);
    expect(sandbox.organizationsTakingTurns).toBe(0);
  });

  test("another organization's runs do not wait for these turns", async () => {
    const sandbox = sandboxWith(1);
    const slow = Array.from({ length: 20 }, () =>
      runOn(sandbox, 'org-a')('let s = 0; for (let i = 0; i < 2e6; i++) s += i; return s > 0;'),
    );
    expect(sandbox.runsWaitingForTurn).toBe(19);
    expect(await runOn(sandbox, 'org-b')('return input.x;', { timeoutMs: 5000 })).toBe(21);
    expect(await Promise.all(slow)).toEqual(Array(20).fill(true));
  });

  test('runs waiting when a larger memoryMb replaces the isolate run on the new one', async () => {
    const sandbox = sandboxWith(1);
    const run = runOn(sandbox);
    const stop = new AbortController();
    const holder = run(NEVER, { signal: stop.signal });
    const queued = run('return "queued";', { timeoutMs: 2000 });
    expect(await run('return "bigger";', { memoryMb: 32 })).toBe('bigger');
    expect(await queued).toBe('queued');
    stop.abort();
    await holder;
  });

  test('dispose ends the waits at once, and no isolate is started after it', async () => {
    const sandbox = sandboxWith(1);
    const run = runOn(sandbox);
    const runs = [
      run(NEVER, { timeoutMs: 60_000 }),
      run('return 0;', { timeoutMs: 60_000 }),
      run(NEVER, { timeoutMs: 60_000 }),
    ];
    sandbox.dispose();
    const results = await Promise.all(runs);
    for (const result of results) expect(result).toMatch(/^ERR /);
    expect(sandbox.warmOrganizations()).toEqual([]);
  });

  test('the runs waiting for a turn end with the closing error itself, not a later one with its message', async () => {
    const sandbox = sandboxWith(1);
    const run = (code: string) =>
      sandbox
        .run({ organizationId: 'org-a', code, input: {}, timeoutMs: 60_000, memoryMb: 16 })
        .catch((error: unknown) => error);
    const runs = [run(NEVER), run('return 0;'), run(NEVER)];
    sandbox.dispose();
    const [, waitedSecond, waitedThird] = await Promise.all(runs);
    const closing = (sandbox as unknown as { closing: AbortController }).closing.signal.reason as unknown;
    expect(closing).toBeInstanceOf(Error);
    expect(waitedSecond).toBe(closing);
    expect(waitedThird).toBe(closing);
  });
});
