import type { ScriptNodeConfig } from '@weft/contracts';
import { runInNewContext } from 'node:vm';
import { CHACHA_RANDOM } from '../src/adapters/nodes/frozen-realm.js';
import { ScriptSandbox } from '../src/adapters/nodes/script-sandbox.js';
import { scriptNodeExecutor } from '../src/adapters/nodes/script-node.js';
import { GraphBuilder } from './fixtures/graph-builder.js';
import { ManualTimers } from './support/manual-timers.js';
import { pureExecutors, runInMemory } from './support/run-in-memory.js';
import { waitUntil } from './support/wait-until.js';

describe('script node (isolated-vm)', () => {
  const sandbox = new ScriptSandbox();
  afterAll(() => sandbox.dispose());
  const org = crypto.randomUUID();
  // Tests of the time limit pass their own; the default covers building the organization's isolate
  // and realm on the first run, which a loaded CI machine has stretched past 2 s.
  const run = (code: string, input: unknown, extra: Partial<ScriptNodeConfig> = {}) =>
    sandbox.run({
      organizationId: org,
      code,
      input,
      timeoutMs: extra.timeoutMs ?? 30_000,
      memoryMb: extra.memoryMb ?? 32,
    });

  /** A sandbox on a test clock, and runs started on it whose failures the test awaits later. */
  const onTestClock = () => {
    const timers = new ManualTimers();
    const own = new ScriptSandbox({ timers });
    const start = (code: string, timeoutMs: number) => {
      const result = own.run({ organizationId: org, code, input: {}, timeoutMs, memoryMb: 32 });
      result.catch(() => undefined);
      return result;
    };
    return { timers, own, start };
  };

  test('receives input and returns the output, async code included', async () => {
    expect(await run('return { sum: input.a + input.b }', { a: 2, b: 3 })).toEqual({ sum: 5 });
    expect(await run('const x = await Promise.resolve(7); return x * 2;', {})).toBe(14);
  });

  test('has no access to the host', async () => {
    const probe = `return [typeof require, typeof process, typeof fetch, typeof setTimeout, typeof globalThis.fs];`;
    expect(await run(probe, {})).toEqual(['undefined', 'undefined', 'undefined', 'undefined', 'undefined']);
  });

  test('state does not leak from one run to the next: the realm the runs share is frozen', async () => {
    // Each attempt to leave something for a later run fails at once, with the language's own error.
    const attempts = [
      'globalThis.leak = 42',
      'Array.prototype.leak = 42',
      'Object.prototype.toString = () => "leak"',
      'JSON.stringify = () => "leak"',
      'Error.prepareStackTrace = () => "leak"',
      '(0, eval)("var leak = 42")',
      'Object.getPrototypeOf(async function () {}).leak = 42',
      'Object.getPrototypeOf([][Symbol.iterator]()).leak = 42',
    ];
    for (const attempt of attempts) {
      await expect(run(`${attempt}; return null`, {})).rejects.toThrow(
        /^script failed: (Cannot (add|assign to read only) property|Cannot define property)/,
      );
    }
    const probe = `return [typeof globalThis.leak, [].leak, String({}), JSON.stringify(1),
      Object.getPrototypeOf(async function () {}).leak, Object.getPrototypeOf([][Symbol.iterator]()).leak];`;
    expect(await run(probe, {})).toEqual(['undefined', null, '[object Object]', '1', null, null]);
  });

  test('the frozen realm adds no globals of its own', async () => {
    const probe = `return ['lockdown', 'harden', 'Compartment', 'assert', 'repairIntrinsics', 'getStackString']
      .map((name) => typeof globalThis[name]).concat(Object.getOwnPropertySymbols(globalThis).length);`;
    expect(await run(probe, {})).toEqual([...Array(6).fill('undefined'), 0]); // a bare V8 global has no symbol keys
  });

  test("a later run cannot read an earlier run's last regular-expression match", async () => {
    expect(await run('return /secret-(\\d+)/.exec(input.text)[1]', { text: 'secret-1234' })).toBe('1234');
    // V8 keeps the last match on the RegExp constructor (RegExp.$1, RegExp.input): removed here.
    expect(await run('return [typeof RegExp.$1, typeof RegExp.input, typeof RegExp.lastMatch]', {})).toEqual([
      'undefined',
      'undefined',
      'undefined',
    ]);
  });

  test('every object reachable from the global object or through syntax is frozen', async () => {
    // Independent of how the realm is frozen: walks prototypes, property values and accessors
    // from the global object and from the intrinsics that only syntax or results reach.
    const walk = `
      const fresh = [async function () {}, function* () {}, async function* () {}, [][Symbol.iterator](),
        new Map()[Symbol.iterator](), new Set()[Symbol.iterator](), ''[Symbol.iterator](), /a/g[Symbol.matchAll]('a'),
        new Intl.Segmenter().segment('a'),
        new Intl.Segmenter().segment('a')[Symbol.iterator](), (function () { return arguments; })(),
        typeof Iterator === 'function' ? [].values().map((x) => x) : {},
        typeof Iterator === 'function' ? Iterator.from({ next() { return { done: true }; } }) : {}];
      const thrower = Object.getOwnPropertyDescriptor((function () { 'use strict'; return arguments; })(), 'callee').get;
      const pending = [[globalThis, 'globalThis'], [thrower, '%ThrowTypeError%'],
        ...fresh.map((value, i) => [Object.getPrototypeOf(value), 'prototype of fresh value ' + i])];
      const seen = new Set();
      const open = [];
      while (pending.length > 0) {
        const [value, where] = pending.pop();
        if ((typeof value !== 'object' && typeof value !== 'function') || value === null || seen.has(value)) continue;
        seen.add(value);
        if (!Object.isFrozen(value)) open.push(where);
        pending.push([Object.getPrototypeOf(value), where + '.__proto__']);
        for (const key of Reflect.ownKeys(value)) {
          const d = Object.getOwnPropertyDescriptor(value, key);
          for (const part of ['value', 'get', 'set']) if (d[part] !== undefined) pending.push([d[part], where + '.' + String(key)]);
        }
      }
      return { open, seen: seen.size };`;
    const { open, seen } = (await run(walk, {})) as { open: string[]; seen: number };
    expect(open).toEqual([]);
    expect(seen).toBeGreaterThan(500);
  });

  test('nothing that outlives a run is in the realm: no finalizers, weak refs, WebAssembly or async waits', async () => {
    // Each could keep a value, or run code, after its run: SES's own stack-trace hook kept any value
    // under a frozen built-in as key, and WebAssembly memory is outside the isolate's limit.
    const probe = `return [typeof FinalizationRegistry, typeof WeakRef, typeof WebAssembly, typeof Atomics.waitAsync,
      typeof Error.prepareStackTrace, typeof Error.captureStackTrace];`;
    expect(await run(probe, {})).toEqual(['undefined', 'undefined', 'undefined', 'undefined', 'undefined', 'function']);
  });

  test("no stack-trace hook is reachable: SES's keeps whatever it is given, under any key", async () => {
    // V8's own Error stayed reachable as the parent of error types SES does not know.
    const walk = `
      const open = [];
      const seen = new Set();
      const pending = [[globalThis, 'globalThis']];
      while (pending.length > 0) {
        const [value, where] = pending.pop();
        if ((typeof value !== 'object' && typeof value !== 'function') || value === null || seen.has(value)) continue;
        seen.add(value);
        if (Object.getOwnPropertyDescriptor(value, 'prepareStackTrace')) open.push(where);
        pending.push([Object.getPrototypeOf(value), where + '.__proto__']);
        for (const key of Reflect.ownKeys(value)) {
          const d = Object.getOwnPropertyDescriptor(value, key);
          for (const part of ['value', 'get', 'set']) if (d[part] !== undefined) pending.push([d[part], where + '.' + String(key)]);
        }
      }
      return [open, Object.getPrototypeOf(SuppressedError) === Error, Error.stackTraceLimit];`;
    expect(await run(walk, {})).toEqual([[], true, 10]);
    expect(await run('Error.stackTraceLimit = Infinity; return Error.stackTraceLimit', {})).toBe(10);
  });

  test('an error message is cut inside the isolate, and only isolated-vm itself can claim a memory limit', async () => {
    const huge = run('throw new Error("x".repeat(2 ** 24))', {});
    await expect(huge).rejects.toThrow(/^script failed: x{16384}…$/);
    await expect(run('throw { get message() { throw new Error("no"); } }', {})).rejects.toThrow(
      'script failed: the script threw a value that cannot be shown',
    );
    await expect(run('throw new Error("memory limit")', {})).rejects.toThrow('script failed: memory limit');
    expect(sandbox.warmOrganizations()).toContain(org);
  });

  test("Math.random is ChaCha20 under the host's key: one run's numbers do not give away another's", async () => {
    // RFC 8439, A.1, test vector 1: the all-zero key and nonce, block 0 starts 76 b8 e0 ad a0 f1 3d 90.
    const chacha = runInNewContext(`(${CHACHA_RANDOM})`) as (key: number[]) => () => number;
    const random = chacha(new Array<number>(8).fill(0));
    expect(random()).toBe(((0xade0b876 >>> 5) * 67108864 + (0x903df1a0 >>> 6)) / 2 ** 53);
    const draws = (await run('return Array.from({ length: 1000 }, () => Math.random())', {})) as number[];
    expect(draws.every((value) => value >= 0 && value < 1)).toBe(true);
    expect(new Set(draws).size).toBe(1000);
    // A new isolate (another organization) gets another key.
    const other = (await sandbox.run({
      organizationId: crypto.randomUUID(),
      code: 'return Array.from({ length: 1000 }, () => Math.random())',
      input: {},
      timeoutMs: 30_000,
      memoryMb: 32,
    })) as number[];
    expect(other.filter((value) => draws.includes(value))).toEqual([]);
  });

  test('a result handed over through a thenable is measured too', async () => {
    const own = new ScriptSandbox({ maxOutputChars: 1000 });
    try {
      const code = '} && (() => ({ then: (resolve) => resolve("x".repeat(5000)) })) || async function () {';
      await expect(own.run({ organizationId: org, code, input: {}, timeoutMs: 30_000, memoryMb: 32 })).rejects.toThrow(
        'script result is larger than 1000 characters of JSON',
      );
    } finally {
      own.dispose();
    }
  });

  test('constructors are the global ones, as in a fresh realm', async () => {
    const probe = `return [new Date().constructor === Date, /a/.constructor === RegExp, new Error('x').constructor === Error,
      Object.getPrototypeOf(TypeError) === Error, new TypeError('x') instanceof Error, typeof new Date().constructor.now()];`;
    expect(await run(probe, {})).toEqual([true, true, true, true, true, 'number']);
  });

  test('code that shadows a frozen built-in on its own objects still works', async () => {
    const code = `
      const money = { amount: 5 };
      money.toString = function () { return this.amount + ' EUR'; };
      class LimitError extends Error { constructor(message) { super(message); this.name = 'LimitError'; } }
      const error = new LimitError('over');
      const spreadIsFast = 'value' in Object.getOwnPropertyDescriptor(Array.prototype, Symbol.iterator);
      const counts = {};
      for (const word of ['constructor', 'hasOwnProperty', 'toString', 'valueOf', 'isPrototypeOf', 'toLocaleString']) {
        counts[word] = (Object.hasOwn(counts, word) ? counts[word] : 0) + 1;
      }
      let input = 'shadowed';
      return [String(money), error.name, error.message, error instanceof Error, Object.keys(counts).length, input, spreadIsFast];`;
    expect(await run(code, {})).toEqual(['5 EUR', 'LimitError', 'over', true, 6, 'shadowed', true]);
  });

  test("code cannot close its function to reach the realm's top level", async () => {
    // A declaration there would outlive the run; Function parses the body on its own.
    await expect(run('})(); let leaked = 1; (function () {', {})).rejects.toThrow(/does not compile/);
    // Closing the inner function lands in the strict outer one, with no more reach than before.
    await expect(run('}, leaked = 1, async function () {', {})).rejects.toThrow('script failed: leaked is not defined');
  });

  test('a script that loops forever is stopped and the sandbox stays healthy', async () => {
    // The guard's timer is on a test clock that never moves: isolated-vm's own timeout stops both
    // loops, so a loaded machine cannot let the guard and spin check race (the reset message).
    const timers = new ManualTimers();
    const own = new ScriptSandbox({ timers });
    try {
      const loop = (code: string) => own.run({ organizationId: org, code, input: {}, timeoutMs: 100, memoryMb: 32 });
      await expect(loop('while (true) {}')).rejects.toThrow(/timed out after 100 ms/);
      await expect(loop('await null; while (true) {}')).rejects.toThrow(/timed out after 100 ms/);
      expect(
        await own.run({ organizationId: org, code: 'return "alive"', input: {}, timeoutMs: 100, memoryMb: 32 }),
      ).toBe('alive');
    } finally {
      own.dispose();
    }
  });

  test("a runaway past its guard gets its isolate reset, and the organization's run waiting on it is told why", async () => {
    const { timers, own, start } = onTestClock();
    try {
      // On the isolate first, waiting (not spinning): its deadline is the later one.
      const waiting = start('await new Promise(() => {})', 120_000);
      await waitUntil(() => own.runningScripts === 1);
      // isolated-vm's own 60 s timeout is real time: only the guard on the test clock stops it here.
      const runaway = start('while (true) {}', 60_000);
      await waitUntil(() => own.runningScripts === 2);

      timers.advance(60_050);
      await expect(runaway).rejects.toThrow(/timed out after 60000 ms/);
      // The spin check waits for the waiting run's deadline, then samples the isolate's CPU time...
      timers.advance(120_001 - 60_050);
      // ...which grows only while the runaway really spins: let it have the CPU for a moment.
      await new Promise((resolve) => setTimeout(resolve, 100));
      // 25 ms later on the test clock the check finds it spinning: before the waiting run's own guard (120 050).
      timers.advance(25);
      await expect(waiting).rejects.toThrow('script stopped: another script of this organization ran past its timeout');
      // The organization's next run gets a fresh isolate.
      expect(await start('return "alive"', 1000)).toBe('alive');
    } finally {
      own.dispose();
    }
  });

  test.each([
    ['before the spin check starts', false],
    ['while the spin check samples', true],
  ])(
    'a run that reaches the isolate after a runaway was stopped (%s) runs again on a fresh isolate',
    async (_, late) => {
      const { timers, own, start } = onTestClock();
      try {
        // Compiled before: the later run goes straight onto the isolate, behind the runaway.
        expect(await start('return 42', 1000)).toBe(42);
        const runaway = start('while (true) {}', 60_000);
        await waitUntil(() => own.runningScripts === 1);
        timers.advance(60_050);
        await expect(runaway).rejects.toThrow(/timed out after 60000 ms/);
        if (late) timers.advance(1); // the spin check starts sampling the isolate's CPU time
        // Its deadline is later than the check: it must not be waited for, it waits behind the spin.
        const next = start('return 42', 1000);
        await waitUntil(() => own.runningScripts === 1);
        if (!late) timers.advance(1);
        await new Promise((resolve) => setTimeout(resolve, 100)); // the runaway spins meanwhile
        timers.advance(25);
        expect(await next).toBe(42);
      } finally {
        own.dispose();
      }
    },
  );

  test('a stopped script that ends by itself keeps its isolate, though later runs burn CPU while the spin check samples', async () => {
    const { timers, own, start } = onTestClock();
    try {
      // Busy for 150 ms of real time: past its guard on the test clock, but it ends on its own.
      const slow = start('const end = Date.now() + 150; while (Date.now() < end) {}', 60_000);
      await waitUntil(() => own.runningScripts === 1);
      timers.advance(60_050);
      await expect(slow).rejects.toThrow(/timed out after 60000 ms/);
      timers.advance(1); // the spin check starts sampling the isolate's CPU time
      await waitUntil(() => own.runningScripts === 0);
      // A later run burns CPU on the isolate inside the sample: its CPU time grows, yet nothing spins.
      expect(await start('const end = Date.now() + 50; while (Date.now() < end) {} return 42', 60_000)).toBe(42);
      timers.advance(25);
      await new Promise((resolve) => setTimeout(resolve, 10));
      expect(own.warmOrganizations()).toEqual([org]); // a reset would have dropped it
    } finally {
      own.dispose();
    }
  });

  test('a script that allocates without bound is stopped and the sandbox stays healthy', async () => {
    const bomb = 'const a = []; while (true) { a.push(new Array(100000).fill("x")); }';
    await expect(run(bomb, {}, { memoryMb: 16, timeoutMs: 10000 })).rejects.toThrow(/memory limit of 16 MB/);
    expect(await run('return 1 + 1', {}, { memoryMb: 16 })).toBe(2);
  });

  test('the result leaves the sandbox as JSON: dates become strings, BigInt and cycles fail the run', async () => {
    expect(await run('return { at: new Date(0), skip: undefined, n: NaN }', {})).toEqual({
      at: '1970-01-01T00:00:00.000Z',
      n: null,
    });
    expect(await run('return undefined', {})).toBeNull();
    expect(await run('return () => 1', {})).toBeNull();
    await expect(run('return 10n', {})).rejects.toThrow(/serialize a BigInt/);
    await expect(run('const a = {}; a.a = a; return a', {})).rejects.toThrow(/circular/);
  });

  test('a script waiting on a promise that never settles times out without stopping the others', async () => {
    const hung = run('await new Promise(() => {}); return 1', {}, { timeoutMs: 100 });
    const slow = run('const end = Date.now() + 300; while (Date.now() < end) {} return "done"', {});
    await expect(hung).rejects.toThrow(/timed out after 100 ms/);
    expect(await slow).toBe('done');
  });

  test("a cancelled script stops spinning, so the organization's next script runs", async () => {
    const controller = new AbortController();
    const spinning = sandbox.run({
      organizationId: org,
      code: 'while (true) {}',
      input: {},
      timeoutMs: 60_000,
      memoryMb: 32,
      signal: controller.signal,
    });
    setTimeout(() => controller.abort(), 100);
    await expect(spinning).rejects.toThrow(/script cancelled/);
    expect(await run('return "next"', {}, { timeoutMs: 2000 })).toBe('next');
  });

  test('constructor tricks reach nothing of the host', async () => {
    // The constructors reached through a function's prototype are inert in the frozen realm; the
    // global Function still builds functions, and they see no host either.
    for (const trick of [
      '({}).constructor.constructor',
      '(async function () {}).constructor',
      'input.constructor.constructor',
    ]) {
      await expect(run(`return ${trick}("return 1")()`, {})).rejects.toThrow(/not a valid constructor/);
    }
    const escape = `return [Function("return typeof process + typeof require")(), typeof Function("return this")().process,
      typeof (0, eval)("this").process];`;
    expect(await run(escape, {})).toEqual(['undefinedundefined', 'undefined', 'undefined']);
  });

  test('a syntax error is reported as a node error', async () => {
    await expect(run('return {', {})).rejects.toThrow(/does not compile/);
  });

  test('a multi-output script fires only the ports it returns', async () => {
    const g = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('Split', 'scriptNode', {
        code: 'return input.In.n % 2 === 0 ? { even: { n: input.In.n } } : { odd: { n: input.In.n } };',
        outputs: ['even', 'odd'],
      })
      .node('Even', 'outputNode')
      .node('Odd', 'outputNode')
      .edge('In', 'Split')
      .edge('Split', 'Even', 'even')
      .edge('Split', 'Odd', 'odd');
    const executors = pureExecutors(scriptNodeExecutor(sandbox));
    const { outcome, listener } = await runInMemory(g.snapshot(), g.id('In'), { n: 4 }, { executors });
    expect(outcome.status).toBe('completed');
    expect(listener.labels('skipped')).toEqual(['Odd']);
    expect((listener.output('Even') as Record<string, unknown>).Split).toEqual({ even: { n: 4 } });
  });

  test('a script node keeps its code untemplated and reports script errors as node failures', async () => {
    const g = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('Code', 'scriptNode', {
        code: 'const t = "{{input}}"; if (input.In.fail) throw new Error("bad " + t); return t;',
      })
      .edge('In', 'Code');
    const executors = pureExecutors(scriptNodeExecutor(sandbox));
    const ok = await runInMemory(g.snapshot(), g.id('In'), { fail: false }, { executors });
    expect(ok.listener.output('Code')).toBe('{{input}}');
    const failed = await runInMemory(g.snapshot(), g.id('In'), { fail: true }, { executors });
    expect(failed.outcome).toMatchObject({ status: 'failed', error: expect.stringContaining('bad {{input}}') });
  });
});
