/** A script failure the node reports as its error. */
export class ScriptError extends Error {
  override name = 'ScriptError';
}
