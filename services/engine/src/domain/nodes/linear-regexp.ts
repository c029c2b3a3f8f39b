import { setFlagsFromString } from 'node:v8';
import { NodeFailure } from './node-executor.js';

/**
 * Patterns come from users and run on the engine's event loop: a backtracking pattern such as
 * `^(a+)+$` would freeze every execution of every organization. V8's linear-time engine (the `l`
 * flag, enabled once here: a process setting, not I/O) runs any pattern in time linear in the text.
 */
let linearEngineEnabled = false;
/** V8's flag for the linear-time engine; unknown to linters, which check flags written inline. */
const LINEAR_FLAG = 'l';

export function linearRegExp(pattern: string): RegExp {
  if (!linearEngineEnabled) {
    setFlagsFromString('--enable-experimental-regexp-engine');
    linearEngineEnabled = true;
  }
  try {
    return new RegExp(pattern, LINEAR_FLAG);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    if (/linear time/i.test(message)) {
      throw new NodeFailure(`regular expression ${pattern} cannot run in linear time (no backreferences)`);
    }
    throw new NodeFailure(`invalid regular expression ${pattern}`);
  }
}
