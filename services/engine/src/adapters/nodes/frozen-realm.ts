import ivm from 'isolated-vm';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

/**
 * One JavaScript realm per warm isolate, shared by the runs of its organization, made safe to
 * share by freezing it (docs/decisions/0006-script-runs-share-a-frozen-realm.md): SES (Hardened
 * JavaScript, Agoric/Endo) repairs and freezes every intrinsic, the hidden ones reached only
 * through syntax included, and removes RegExp's legacy statics (the last match of any run); what
 * could outlive a run is removed first and the global object is frozen last. A run's code is a
 * function of its own, `input` is its parameter and its result goes straight back, so nothing a
 * run holds is reachable from a later run, and nothing a run does changes what a later one sees.
 * A fresh context per run cost 0.6-0.8 ms of CPU; a call into this realm under 0.1 ms.
 */
export interface FrozenRealm {
  /** The run function for `code` (compiled once, cached by the caller); rejects if `code` does not parse. */
  compile(code: string, timeoutMs: number): Promise<ivm.Reference>;
  /** Runs a compiled script on `input`; resolves to its result as JSON text, at most `maxChars` long. */
  run(compiled: ivm.Reference, input: unknown, options: { timeoutMs: number; maxChars: number }): Promise<unknown>;
}

/** Thrown inside the isolate, so an oversize result never reaches the host heap. */
export const OVERSIZE_MARK = 'weft: script result too large';
/** Longest error message a failed run hands the host (the rest is cut inside the isolate). */
export const MAX_ERROR_MESSAGE_CHARS = 16 * 1024;

let sesSource: string | undefined;
/** SES's self-contained browser bundle: one script, no imports, defines `lockdown` and `harden`. */
const sesBundle = (): string => {
  if (sesSource === undefined) {
    const sesPackage = createRequire(import.meta.url).resolve('ses/package.json');
    sesSource = readFileSync(path.join(path.dirname(sesPackage), 'dist', 'ses.umd.min.js'), 'utf8');
  }
  return sesSource;
};

/** V8's code cache of the bundle, made by the first isolate: later ones skip most of its compilation. */
let sesCodeCache: { cachedData?: ivm.ExternalCopy<ArrayBuffer>; produceCachedData?: boolean } = {
  produceCachedData: true,
};

/**
 * `Math.random` for the realm (serialized into it): ChaCha20 (RFC 8439, 20 rounds) in counter mode
 * under a 256-bit key from the host; 53 bits of two output words per number. Its outputs do not
 * give its state away, unlike V8's xorshift128+.
 */
export const CHACHA_RANDOM = `function (key) {
  const state = new Uint32Array(16);
  state.set([0x61707865, 0x3320646e, 0x79622d32, 0x6b206574]);
  state.set(key, 4);
  const words = new Uint32Array(16);
  const x = new Uint32Array(16);
  let next = 16;
  const quarter = (a, b, c, d) => {
    x[a] += x[b]; x[d] ^= x[a]; x[d] = (x[d] << 16) | (x[d] >>> 16);
    x[c] += x[d]; x[b] ^= x[c]; x[b] = (x[b] << 12) | (x[b] >>> 20);
    x[a] += x[b]; x[d] ^= x[a]; x[d] = (x[d] << 8) | (x[d] >>> 24);
    x[c] += x[d]; x[b] ^= x[c]; x[b] = (x[b] << 7) | (x[b] >>> 25);
  };
  const block = () => {
    x.set(state);
    for (let round = 0; round < 10; round++) {
      quarter(0, 4, 8, 12); quarter(1, 5, 9, 13); quarter(2, 6, 10, 14); quarter(3, 7, 11, 15);
      quarter(0, 5, 10, 15); quarter(1, 6, 11, 12); quarter(2, 7, 8, 13); quarter(3, 4, 9, 14);
    }
    for (let i = 0; i < 16; i++) words[i] = x[i] + state[i];
    state[12] += 1;
    if (state[12] === 0) state[13] += 1;
    next = 0;
  };
  return function random() {
    if (next > 14) block();
    const high = words[next++] >>> 5;
    const low = words[next++] >>> 6;
    return (high * 67108864 + low) / 9007199254740992;
  };
}`;

/**
 * Runs in the fresh realm after SES's bundle, with the globals it found there and 32 random bytes
 * of the host. Between SES's repairs and its freezing:
 * - what could keep a value, or run code, beyond the run that made it goes: SES's
 *   `Error.prepareStackTrace` (a WeakMap of its own, keyed by any object, frozen built-ins
 *   included), `FinalizationRegistry` and `WeakRef` (callbacks and targets outside any run),
 *   `Atomics.waitAsync` (never settles here), and `WebAssembly` (its memory is outside the
 *   isolate's limit, and its compiles finish outside any run);
 * - `Math.random` draws from ChaCha20 keyed by the host's randomness: V8's own generator is
 *   shared by the realm and its state can be recovered from a few dozen outputs, so one run could
 *   predict another's values;
 * - the prototypes' `constructor` of Date, RegExp and Error (and the Error types' parent) are the
 *   global ones again: SES gives them a second, "shared" constructor meant for compartments, which
 *   made `new Date().constructor === Date` false; V8's own Error, still the parent of the error
 *   types SES does not know, loses SES's hook and goes out of reach;
 * - assignments that shadow a property of `Object.prototype`, of the error prototypes and a few
 *   others on one's own object (`counts["constructor"] = 1`, `this.name = ...`) keep working.
 * Locale, console and eval stay as the language has them (eval and Function see only the frozen
 * globals); a failed run reports its error's message only, cut to MAX_ERROR_MESSAGE_CHARS. The
 * globals SES added go before the global object is frozen. Returns [compile, run], reachable only
 * through the host's references.
 */
const FREEZE_AND_ENTRY_POINTS = `(function (globalsBeforeSes, key) {
  "use strict";
  repairIntrinsics({ errorTaming: "safe", overrideTaming: "min", localeTaming: "unsafe", consoleTaming: "unsafe", evalTaming: "unsafe-eval" });
  delete Error.prepareStackTrace;
  delete Atomics.waitAsync;
  for (const name of ["FinalizationRegistry", "WeakRef", "WebAssembly"]) delete globalThis[name];
  // V8's own Error, still the parent of the error types SES does not know (SuppressedError): its
  // prepareStackTrace is SES's hook, which keeps its arguments in a WeakMap under any key.
  const feralError = Object.getPrototypeOf(SuppressedError);
  feralError.prepareStackTrace = function prepareStackTrace() { return ""; };
  Object.freeze(feralError);
  Object.defineProperty(Error, "stackTraceLimit", { get() { return 10; }, set() {}, enumerable: false, configurable: true });
  for (const [type, original] of [[Date, Date], [RegExp, RegExp], [Error, Error]]) {
    Object.defineProperty(type.prototype, "constructor", { value: original, writable: true, enumerable: false, configurable: true });
  }
  const errorTypes = [EvalError, RangeError, ReferenceError, SyntaxError, TypeError, URIError, AggregateError, SuppressedError];
  for (const type of errorTypes) Object.setPrototypeOf(type, Error);
  Math.random = (${CHACHA_RANDOM})(key);
  // Assignments that shadow these on one's own object keep working once they are frozen (SES's
  // "min" taming does Object.prototype.toString, Function.prototype.toString, Error.prototype.name).
  // Not the collections' iterators: an accessor there takes V8's fast path off every spread.
  const overridable = (object, key) => {
    const described = Object.getOwnPropertyDescriptor(object, key);
    if (!described || !("value" in described) || !described.configurable) return;
    const value = described.value;
    Object.defineProperty(object, key, {
      get: function () { return value; },
      set: function (next) {
        if (this === object) throw new TypeError("Cannot assign to read only property '" + String(key) + "' of a built-in");
        Object.defineProperty(this, key, { value: next, writable: true, enumerable: true, configurable: true });
      },
      enumerable: described.enumerable,
      configurable: true,
    });
  };
  for (const key of Reflect.ownKeys(Object.prototype)) if (key !== "toString") overridable(Object.prototype, key);
  for (const type of [Error, ...errorTypes]) {
    for (const key of ["constructor", "message", "name"]) if (type !== Error || key !== "name") overridable(type.prototype, key);
  }
  for (const key of ["constructor", "bind"]) overridable(Function.prototype, key);
  overridable(Promise.prototype, "constructor");
  globalThis.hardenIntrinsics();
  const harden = globalThis.harden;
  const before = new Set(globalsBeforeSes);
  for (const name of Reflect.ownKeys(globalThis)) if (!before.has(name)) delete globalThis[name];
  harden(globalThis);
  // ECMA-402's hidden intrinsics, which SES does not reach: Intl.Segmenter's segments and their iterator.
  const segments = new Intl.Segmenter().segment("");
  harden(Object.getPrototypeOf(segments));
  harden(Object.getPrototypeOf(segments[Symbol.iterator]()));
  const stringify = JSON.stringify;
  const compile = (code) => new Function("input", '"use strict"; return async function () {\\n' + code + '\\n};');
  // What a failed run reports: the message only, cut here so a huge one never reaches the host.
  const messageOf = (error) => {
    try {
      const message = error !== null && typeof error === "object" ? error.message : undefined;
      const text = typeof message === "string" ? message : String(error);
      return text.length > ${MAX_ERROR_MESSAGE_CHARS} ? text.slice(0, ${MAX_ERROR_MESSAGE_CHARS}) + "…" : text;
    } catch {
      return "the script threw a value that cannot be shown";
    }
  };
  // Awaited before the size check: whatever the code returns (a thenable too) is measured.
  const run = async (script, input, maxChars) => {
    let json;
    try {
      const result = await script(input)();
      json = stringify(result === undefined ? null : result) ?? "null";
    } catch (error) {
      throw new Error(messageOf(error));
    }
    if (json.length > maxChars) throw new Error(${JSON.stringify(OVERSIZE_MARK)} + " (" + json.length + " characters)");
    return json;
  };
  return [compile, run];
})`;

/**
 * A frozen realm on `isolate`. `code` becomes the body of an async function inside a strict outer
 * function whose parameter is `input` (so `let input` in the body still works, as it did with
 * `input` a global); Function parses the body on its own, so code cannot close the function and
 * reach the realm's top level.
 */
export const createFrozenRealm = async (isolate: ivm.Isolate): Promise<FrozenRealm> => {
  const context = await isolate.createContext();
  const globalsBeforeSes: ivm.Reference = await context.eval('Reflect.ownKeys(globalThis)', { reference: true });
  // compileScript's declared type leaves out the cached data it sets (isolated-vm's CachedDataResult).
  const ses: ivm.Script & ivm.CachedDataResult = await isolate.compileScript(sesBundle(), {
    filename: 'ses.umd.min.js',
    ...sesCodeCache,
  });
  if (!sesCodeCache.cachedData && ses.cachedData) sesCodeCache = { cachedData: ses.cachedData };
  await ses.run(context);
  const freeze: ivm.Reference = await context.eval(FREEZE_AND_ENTRY_POINTS, { reference: true });
  const key = new ivm.ExternalCopy([...crypto.getRandomValues(new Uint32Array(8))]).copyInto();
  const entryPoints: ivm.Reference = await freeze.apply(undefined, [globalsBeforeSes.derefInto(), key], {
    result: { reference: true },
  });
  const compileRef: ivm.Reference = await entryPoints.get(0, { reference: true });
  const runRef: ivm.Reference = await entryPoints.get(1, { reference: true });
  for (const done of [globalsBeforeSes, freeze, entryPoints]) done.release();
  return {
    compile: (code, timeoutMs) =>
      compileRef.apply(undefined, [code], {
        timeout: timeoutMs,
        result: { reference: true },
      }) as Promise<ivm.Reference>,
    run: (compiled, input, { timeoutMs, maxChars }) =>
      runRef.apply(undefined, [compiled.derefInto(), new ivm.ExternalCopy(input ?? null).copyInto(), maxChars], {
        timeout: timeoutMs,
        result: { promise: true, copy: true },
      }),
  };
};
