import { setFlagsFromString } from 'node:v8';
import { NodeFailure } from '../../domain/nodes/node-executor.js';
import { OptionalModule } from './optional-module.js';

/**
 * JSONata expressions from tenants, evaluated with jsonata's own guardrails (a time limit and a
 * stack depth) and regular expressions on V8's linear-time engine, so no mapping can hold the
 * engine's event loop. Parsed expressions are cached by text (bounded).
 */
type Jsonata = typeof import('jsonata');
type Expression = ReturnType<Jsonata>;

const MAX_PARSED = 1000;
const MAX_STACK = 500;
const LINEAR_FLAG = 'l';

let linearEngineEnabled = false;

/** jsonata constructs its regexes with `new RegexEngine(pattern, flags)`. */
function LinearRegExp(pattern: string, flags?: string): RegExp {
  if (!linearEngineEnabled) {
    setFlagsFromString('--enable-experimental-regexp-engine');
    linearEngineEnabled = true;
  }
  return new RegExp(pattern, `${flags ?? ''}${LINEAR_FLAG}`);
}

export const JSONATA_INSTALL_HINT = 'install jsonata (pnpm add jsonata)';

export class JsonataMappings {
  readonly runtime: OptionalModule<Jsonata>;
  private readonly parsed = new Map<string, Expression>();

  constructor(loadRuntime?: () => Promise<Jsonata>) {
    this.runtime = new OptionalModule(
      'JSONata',
      JSONATA_INSTALL_HINT,
      loadRuntime ??
        (async () => {
          const loaded = (await import('jsonata')) as unknown as { default?: Jsonata } & Jsonata;
          return loaded.default ?? loaded;
        }),
    );
  }

  /** Evaluates `expression` over `input`; `undefined` results become null. `what` names it in errors. */
  async evaluate(what: string, expression: string, input: unknown, timeoutMs: number): Promise<unknown> {
    const jsonata = await this.runtime.get();
    const compiled = this.expression(jsonata, what, expression, timeoutMs);
    try {
      const result = await compiled.evaluate(input);
      return result === undefined ? null : JSON.parse(JSON.stringify(result));
    } catch (error) {
      const coded = error as { code?: string; message?: string; position?: number };
      if (coded.code === 'D1012') throw new NodeFailure(`${what}: timed out after ${timeoutMs} ms`);
      if (coded.code === 'D1011') throw new NodeFailure(`${what}: recursion deeper than ${MAX_STACK}`);
      throw new NodeFailure(`${what}: ${describe(coded)}`);
    }
  }

  private expression(jsonata: Jsonata, what: string, text: string, timeoutMs: number): Expression {
    const key = `${timeoutMs}\u0000${text}`;
    const cached = this.parsed.get(key);
    if (cached) return cached;
    let expression: Expression;
    try {
      expression = jsonata(text, {
        timeout: timeoutMs,
        stack: MAX_STACK,
        RegexEngine: LinearRegExp as unknown as RegExpConstructor,
      });
    } catch (error) {
      throw new NodeFailure(
        `${what}: invalid JSONata: ${describe(error as { code?: string; message?: string; position?: number })}`,
      );
    }
    if (this.parsed.size >= MAX_PARSED) this.parsed.delete(this.parsed.keys().next().value as string);
    this.parsed.set(key, expression);
    return expression;
  }
}

const describe = (error: { code?: string; message?: string; position?: number }): string =>
  `${error.message ?? 'failed'}${error.code ? ` (${error.code}${error.position !== undefined ? ` at ${error.position}` : ''})` : ''}`;
