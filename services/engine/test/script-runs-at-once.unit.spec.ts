import { ScriptSandbox } from '../src/adapters/nodes/script-sandbox.js';

/**
 * A script that proved fast runs at once on the engine's thread (ScriptSandbox.runAtOnce): the
 * same results and errors as a run queued on its isolate's thread, and never a block longer than
 * AT_ONCE_BUDGET_MS. A run past the budget or waiting on a promise goes to the queue with its full
 * time, and its script stays there; so does one slow three times. No run is called at once while a
 * runaway stopped by its guard may still spin (script-node.unit.spec.ts, "a run that reaches the
 * isolate after a runaway was stopped": its compiled run waits, then queues behind the spin).
 */
describe('script runs called at once', () => {
  let sandbox: ScriptSandbox;
  beforeEach(() => {
    sandbox = new ScriptSandbox({ maxOutputChars: 1000 });
  });
  afterEach(() => sandbox.dispose());

  const run = (code: string, input: unknown, options: { timeoutMs?: number; signal?: AbortSignal } = {}) =>
    sandbox
      .run({
        organizationId: 'org-a',
        code,
        input,
        timeoutMs: options.timeoutMs ?? 5000,
        memoryMb: 16,
        signal: options.signal,
      })
      .catch((error: Error) => `ERR ${error.message}`);

  test('a compiled script runs at once, with the result a queued run gives', async () => {
    const code = 'return { doubled: input.x * 2, at: new Date(input.at), none: undefined };';
    const queued = await run(code, { x: 21, at: 0 });
    expect(sandbox.runsCalledAtOnce).toBe(0);
    const atOnce = await run(code, { x: 21, at: 0 });
    expect(sandbox.runsCalledAtOnce).toBe(1);
    expect(atOnce).toEqual(queued);
    expect(atOnce).toEqual({ doubled: 42, at: '1970-01-01T00:00:00.000Z' });
  });

  test('what a run at once leaves behind reaches no later run: the realm is as frozen as ever', async () => {
    const code = `
      let wrote = 'nothing';
      try { Array.prototype.kept = input.secret; wrote = 'prototype'; } catch {}
      try { globalThis.kept = input.secret; wrote = 'global'; } catch {}
      return { wrote, seen: [].kept ?? globalThis.kept ?? null };`;
    await run(code, { secret: 'first' });
    expect(await run(code, { secret: 'second' })).toEqual({ wrote: 'nothing', seen: null });
    expect(sandbox.runsCalledAtOnce).toBe(1);
  });

  test('errors and oversize results at once read as queued ones', async () => {
    const code = 'if (input.fail) throw new Error("boom: " + input.fail); return input.big ? "x".repeat(2000) : 1;';
    expect(await run(code, {})).toBe(1);
    expect(await run(code, { fail: 'at once' })).toBe('ERR script failed: boom: at once');
    expect(await run(code, { big: true })).toBe(
      'ERR script result is larger than 1000 characters of JSON (WEFT_SCRIPT_OUTPUT_MAX_BYTES)',
    );
    expect(sandbox.runsCalledAtOnce).toBe(2);
    expect(await run(code, {})).toBe(1);
    expect(sandbox.runsCalledAtOnce).toBe(3);
  });

  test('a run past the budget at once is queued with its full time, and its script stays queued', async () => {
    const code =
      'if (input.spinMs) { const end = Date.now() + input.spinMs; while (Date.now() < end) {} } return input.spinMs ?? 0;';
    expect(await run(code, {})).toBe(0);
    expect(await run(code, { spinMs: 150 })).toBe(150);
    expect(sandbox.runsCalledAtOnce).toBe(0);
    expect(await run(code, {})).toBe(0);
    expect(sandbox.runsCalledAtOnce).toBe(0);
  });

  test('a spin after an await at once is stopped too; past its own time it is a timeout', async () => {
    const code = 'if (input.spin) { await null; while (true) {} } return 1;';
    expect(await run(code, {})).toBe(1); // made the realm and compiled the code, queued
    expect(await run(code, { spin: true }, { timeoutMs: 10 })).toBe('ERR script timed out after 10 ms');
    expect(sandbox.runsCalledAtOnce).toBe(1);
    expect(await run(code, {})).toBe(1);
  });

  test('a run at once waiting on a promise nothing settles is queued, and times out on its own time', async () => {
    const code = 'if (input.park) await new Promise(() => {}); return 1;';
    expect(await run(code, {})).toBe(1);
    expect(await run(code, { park: true }, { timeoutMs: 300 })).toBe('ERR script timed out after 300 ms');
    expect(sandbox.runsCalledAtOnce).toBe(0);
    expect(await run(code, {})).toBe(1);
    expect(sandbox.runsCalledAtOnce).toBe(0);
  });

  test("nothing runs at once while a call is out on the isolate's thread", async () => {
    const fast = 'return input.x;';
    expect(await run(fast, { x: 1 })).toBe(1);
    const stop = new AbortController();
    const parked = run('await new Promise(() => {}); return 0;', {}, { timeoutMs: 60_000, signal: stop.signal });
    while (sandbox.runningScripts === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    expect(await run(fast, { x: 2 })).toBe(2);
    expect(await run(fast, { x: 3 })).toBe(3);
    expect(sandbox.runsCalledAtOnce).toBe(0);
    stop.abort();
    expect(await parked).toBe('ERR script cancelled');
    // Stopped while its code was on the isolate, it might spin there for good: this isolate's runs
    // are queued from now on (a new isolate, after an eviction or a reset, starts afresh).
    expect(await run(fast, { x: 4 })).toBe(4);
    expect(sandbox.runsCalledAtOnce).toBe(0);
  });

  test("runs waiting for the isolate's thread are called at once when it frees", async () => {
    // They wait as long as it takes here (the default is 10 ms, then they queue).
    const patient = new ScriptSandbox({ idleWaitMs: 60_000 });
    try {
      const runOn = (code: string, input: unknown) =>
        patient.run({ organizationId: 'org-a', code, input, timeoutMs: 5000, memoryMb: 16 });
      expect(await runOn('return input.x;', { x: 1 })).toBe(1);
      const busy = runOn('const end = Date.now() + 50; while (Date.now() < end) {} return "busy";', {});
      while (patient.runningScripts === 0) await new Promise((resolve) => setTimeout(resolve, 1));
      const waiting = [2, 3, 4].map((x) => runOn('return input.x;', { x }));
      expect(await Promise.all([busy, ...waiting])).toEqual(['busy', 2, 3, 4]);
      expect(patient.runsCalledAtOnce).toBe(3);
    } finally {
      patient.dispose();
    }
  });

  test('a script over its memory at once is stopped as a queued one is; the next run gets a fresh isolate', async () => {
    const code = 'if (input.grow) { const kept = []; for (;;) kept.push(new Array(1e5).fill(input.grow)); } return 1;';
    expect(await run(code, {})).toBe(1);
    expect(await run(code, { grow: 7 })).toBe('ERR script exceeded its memory limit of 16 MB');
    expect(await run(code, {})).toBe(1);
  });

  test('a script slow at once three times is queued from then on', async () => {
    const code = 'let sum = 0; for (let i = 0; i < input.n; i++) sum += i % 7; return sum > 0;';
    expect(await run(code, { n: 3e6 })).toBe(true);
    for (let i = 0; i < 4; i++) expect(await run(code, { n: 3e6 })).toBe(true);
    const calledAtOnce = sandbox.runsCalledAtOnce;
    expect(calledAtOnce).toBeLessThanOrEqual(3);
    expect(await run(code, { n: 3e6 })).toBe(true);
    expect(sandbox.runsCalledAtOnce).toBe(calledAtOnce);
  });
});
