import ivm from 'isolated-vm';

/**
 * JavaScript sandboxes on isolated-vm. One warm isolate per organization and memory limit (so a
 * runaway script hurts only its own organization), a fresh context for every run (so nothing
 * leaks between runs), and compiled scripts cached per isolate. A fresh context has no require,
 * fs, process, timers or network: only `input` and the language itself.
 */
export class ScriptError extends Error {
  override name = 'ScriptError';
}

interface WarmIsolate {
  isolate: ivm.Isolate;
  scripts: Map<string, ivm.Script>;
}

export interface ScriptRun {
  organizationId: string;
  code: string;
  input: unknown;
  timeoutMs: number;
  memoryMb: number;
  signal?: AbortSignal;
}

const MAX_CACHED_SCRIPTS = 500;

export class ScriptSandbox {
  private readonly isolates = new Map<string, WarmIsolate>();

  async run({ organizationId, code, input, timeoutMs, memoryMb, signal }: ScriptRun): Promise<unknown> {
    const key = `${organizationId}:${memoryMb}`;
    const warm = this.isolateFor(key, memoryMb);
    const script = this.compile(warm, code);
    const context = await warm.isolate.createContext();
    let timer: NodeJS.Timeout | undefined;
    try {
      await context.global.set('input', new ivm.ExternalCopy(input ?? null).copyInto());
      const running = script.run(context, { timeout: timeoutMs, promise: true, copy: true }) as Promise<unknown>;
      // The isolate's own timeout covers synchronous code; this one also covers code after an await.
      const guard = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          this.discard(key, warm);
          reject(new ScriptError(`script timed out after ${timeoutMs} ms`));
        }, timeoutMs + 50);
        signal?.addEventListener('abort', () => reject(new ScriptError('script cancelled')), { once: true });
      });
      return await Promise.race([running, guard]);
    } catch (error) {
      throw this.explain(error, warm, key, timeoutMs, memoryMb);
    } finally {
      clearTimeout(timer);
      if (!warm.isolate.isDisposed) context.release();
    }
  }

  dispose(): void {
    for (const [key, warm] of this.isolates) this.discard(key, warm);
  }

  private isolateFor(key: string, memoryMb: number): WarmIsolate {
    const existing = this.isolates.get(key);
    if (existing && !existing.isolate.isDisposed) return existing;
    const warm = { isolate: new ivm.Isolate({ memoryLimit: memoryMb }), scripts: new Map<string, ivm.Script>() };
    this.isolates.set(key, warm);
    return warm;
  }

  private compile(warm: WarmIsolate, code: string): ivm.Script {
    let script = warm.scripts.get(code);
    if (!script) {
      try {
        script = warm.isolate.compileScriptSync(`(async function () { "use strict";\n${code}\n})()`);
      } catch (error) {
        throw new ScriptError(`script does not compile: ${error instanceof Error ? error.message : String(error)}`);
      }
      if (warm.scripts.size >= MAX_CACHED_SCRIPTS) warm.scripts.clear();
      warm.scripts.set(code, script);
    }
    return script;
  }

  private discard(key: string, warm: WarmIsolate): void {
    if (this.isolates.get(key) === warm) this.isolates.delete(key);
    if (!warm.isolate.isDisposed) warm.isolate.dispose();
  }

  private explain(error: unknown, warm: WarmIsolate, key: string, timeoutMs: number, memoryMb: number): Error {
    if (error instanceof ScriptError) return error;
    const message = error instanceof Error ? error.message : String(error);
    if (warm.isolate.isDisposed || /memory limit/i.test(message)) {
      this.discard(key, warm);
      return new ScriptError(`script exceeded its memory limit of ${memoryMb} MB`);
    }
    if (/timed out/i.test(message)) return new ScriptError(`script timed out after ${timeoutMs} ms`);
    return new ScriptError(`script failed: ${message}`);
  }
}
