import { ScriptSandbox } from '../src/adapters/nodes/script-sandbox.js';

/**
 * A script that proved fast runs at once on the engine's thread (ScriptSandbox.runAtOnce): the
 * same results and errors as a run queued on its isolate's thread. A run past the budget, waiting
 * on a promise or out of stack goes to the queue with its full time, and its script stays there
 * (also after its isolate is replaced); so does one that took longer than the budget anyway, one
 * killed at its memory limit, and one slow too often. No run is called at once while a
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

  test('a spin after an await at once is stopped at the budget and queued; a run of 20 ms or less is never called at once', async () => {
    const code =
      'if (input.spinFor) { await null; const end = Date.now() + input.spinFor; while (Date.now() < end) {} } return 1;';
    expect(await run(code, {})).toBe(1); // made the realm and compiled the code, queued
    expect(await run(code, {}, { timeoutMs: 20 })).toBe(1);
    expect(await run(code, { spinFor: 10_000 }, { timeoutMs: 20 })).toBe('ERR script timed out after 20 ms');
    expect(sandbox.runsCalledAtOnce).toBe(0);
    expect(await run(code, {})).toBe(1);
    expect(sandbox.runsCalledAtOnce).toBe(1);
    expect(await run(code, { spinFor: 100 })).toBe(1);
    expect(sandbox.runsCalledAtOnce).toBe(1);
    expect(await run(code, {})).toBe(1);
    expect(sandbox.runsCalledAtOnce).toBe(1);
  });

  test('a run longer than the budget in a built-in V8 cannot stop keeps its result; its script is queued from then on', async () => {
    const code =
      'if (!input.n) return 0; const a = Array.from({ length: input.n }, (_, i) => (i * 7919) % input.n); a.sort(); return a.length;';
    const sorting = (input: unknown) =>
      sandbox
        .run({ organizationId: 'org-a', code, input, timeoutMs: 60_000, memoryMb: 128 })
        .catch((error: Error) => `ERR ${error.message}`);
    expect(await sorting({})).toBe(0);
    // Stopped at the budget and queued, or not stoppable and kept: either way it is its last run at once.
    expect(await sorting({ n: 2e6 })).toBe(2e6);
    const calledAtOnce = sandbox.runsCalledAtOnce;
    expect(await sorting({})).toBe(0);
    expect(sandbox.runsCalledAtOnce).toBe(calledAtOnce);
  });

  test('a run whose stack runs out at once is queued, where the stack is deeper; its script stays queued', async () => {
    const code = 'const depth = (n) => (n === 0 ? 0 : 1 + depth(n - 1)); return depth(input.n);';
    expect(await run(code, { n: 10 })).toBe(10);
    expect(await run(code, { n: 20_000 })).toBe(20_000);
    expect(await run(code, { n: 10 })).toBe(10);
    expect(sandbox.runsCalledAtOnce).toBeLessThanOrEqual(1);
    const calledAtOnce = sandbox.runsCalledAtOnce;
    expect(await run(code, { n: 10 })).toBe(10);
    expect(sandbox.runsCalledAtOnce).toBe(calledAtOnce);
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

  test('a script over its memory at once is stopped as a queued one is; it stays queued on the fresh isolate', async () => {
    const code = 'if (input.grow) { const kept = []; for (;;) kept.push(new Array(1e5).fill(input.grow)); } return 1;';
    expect(await run(code, {})).toBe(1);
    expect(await run(code, { grow: 7 })).toBe('ERR script exceeded its memory limit of 16 MB');
    expect(await run(code, {})).toBe(1); // compiled again, on a fresh isolate
    const calledAtOnce = sandbox.runsCalledAtOnce;
    expect(await run(code, {})).toBe(1);
    expect(sandbox.runsCalledAtOnce).toBe(calledAtOnce);
  });

  test('a script that blocks in the isolate without CPU (Atomics.wait) is slow too, and queued after three runs', async () => {
    const code = 'Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, input.waitMs); return input.i;';
    for (let i = 0; i <= 20; i++) expect(await run(code, { i, waitMs: 0 })).toBe(i); // compiled, then warmed up
    expect(sandbox.runsCalledAtOnce).toBe(20);
    for (let i = 1; i <= 6; i++) expect(await run(code, { i, waitMs: 5 })).toBe(i);
    expect(sandbox.runsCalledAtOnce).toBe(23);
  });

  test('a script slow at once too often is queued from then on, every other run slow included', async () => {
    const code = 'if (input.slow) { let sum = 0; for (let i = 0; i < 3e6; i++) sum += i % 7; } return input.i;';
    for (let i = 0; i <= 20; i++) expect(await run(code, { i })).toBe(i); // compiled, then warmed up
    for (let i = 1; i <= 12; i++) expect(await run(code, { i, slow: i % 2 === 1 })).toBe(i);
    // Slow counts 1 and fast pays back 0.1: queued after the fourth slow run, the seventh at once.
    const calledAtOnce = sandbox.runsCalledAtOnce;
    expect(calledAtOnce).toBeLessThanOrEqual(20 + 7);
    expect(await run(code, { i: 13 })).toBe(13);
    expect(sandbox.runsCalledAtOnce).toBe(calledAtOnce);
  });
});
