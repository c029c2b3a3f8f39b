import ivm from 'isolated-vm';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';

/**
 * One JavaScript realm per warm isolate, shared by the runs of its organization, made safe to
 * share by freezing it (docs/decisions/0006-script-runs-share-a-frozen-realm.md): SES's
 * `lockdown()` (Hardened JavaScript, Agoric/Endo) freezes every intrinsic, the hidden ones reached
 * only through syntax included, removes RegExp's legacy statics (the last match of any run) and
 * keeps assignments that shadow a frozen inherited property working (`obj.toString = ...`,
 * `this.name = ...` in an Error subclass); then the global object itself is frozen. A run's code
 * is a function of its own, `input` is its parameter and its result goes straight back, so nothing
 * a run holds is reachable from a later run, and nothing a run does changes what a later one sees.
 * A fresh context per run cost 0.6-0.7 ms of CPU; a call into this realm about 0.1 ms.
 */
export interface FrozenRealm {
  /** The run function for `code` (compiled once, cached by the caller); rejects if `code` does not parse. */
  compile(code: string, timeoutMs: number): Promise<ivm.Reference>;
  /** Runs a compiled script on `input`; resolves to its result as JSON text, at most `maxChars` long. */
  run(compiled: ivm.Reference, input: unknown, options: { timeoutMs: number; maxChars: number }): Promise<unknown>;
}

/** Thrown inside the isolate, so an oversize result never reaches the host heap. */
export const OVERSIZE_MARK = 'weft: script result too large';

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
 * Runs in the fresh realm after SES's bundle. Locale, console and eval are left as the language
 * has them (nothing of the host is reachable: eval and Function only see the frozen globals);
 * errors keep their messages, which is all a failed run reports. The globals SES added (lockdown,
 * harden, Compartment, assert, ...) go before the global object is frozen. Returns
 * [compile, run], reachable only through the host's references.
 */
const FREEZE_AND_ENTRY_POINTS = `(function (globalsBeforeSes) {
  "use strict";
  lockdown({ errorTaming: "safe", overrideTaming: "moderate", localeTaming: "unsafe", consoleTaming: "unsafe", evalTaming: "unsafe-eval" });
  const harden = globalThis.harden;
  const before = new Set(globalsBeforeSes);
  for (const key of Reflect.ownKeys(globalThis)) if (!before.has(key)) delete globalThis[key];
  harden(globalThis);
  // ECMA-402's hidden intrinsics, which SES does not reach: Intl.Segmenter's segments and their iterator.
  const segments = new Intl.Segmenter().segment("");
  harden(Object.getPrototypeOf(segments));
  harden(Object.getPrototypeOf(segments[Symbol.iterator]()));
  const stringify = JSON.stringify;
  const compile = (code) => new Function("input", '"use strict"; return async function () {\\n' + code + '\\n};');
  const run = (script, input, maxChars) => script(input)().then((result) => {
    const json = stringify(result === undefined ? null : result) ?? "null";
    if (json.length > maxChars) throw new Error(${JSON.stringify(OVERSIZE_MARK)} + " (" + json.length + " characters)");
    return json;
  });
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
  const entryPoints: ivm.Reference = await freeze.apply(undefined, [globalsBeforeSes.derefInto()], {
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
