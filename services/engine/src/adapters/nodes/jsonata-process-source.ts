/**
 * The code of a JSONata evaluation process (CommonJS, run with `node -e`, so it needs no file next
 * to the build). It loads jsonata from the path the engine resolved (WEFT_JSONATA_RUNTIME), keeps
 * parsed expressions by text (bounded), and answers one `{id, expression, input, timeoutMs}` at a
 * time over the IPC channel with `{id, json}` (the result as JSON text, `null` for undefined or a
 * function) or `{id, error: {code, message, position, parse}}`. Regular expressions run on V8's
 * linear-time engine (the process starts with --enable-experimental-regexp-engine; jsonata
 * constructs them with `new RegexEngine(pattern, flags)`), so no pattern backtracks for ever.
 */
export const JSONATA_PROCESS_SOURCE = `
let jsonata;
try {
  jsonata = require(process.env.WEFT_JSONATA_RUNTIME);
  jsonata = jsonata.default || jsonata;
} catch (error) {
  process.send({ fatal: true, message: String(error.message) });
}
const maxStack = Number(process.env.WEFT_JSONATA_MAX_STACK);
const maxParsed = Number(process.env.WEFT_JSONATA_MAX_PARSED);
function LinearRegExp(pattern, flags) {
  return new RegExp(pattern, (flags || '') + 'l');
}
const parsed = new Map();
const failure = (error, parse) => ({
  code: error && error.code,
  message: String(error && error.message ? error.message : error),
  position: error && error.position,
  parse,
});
if (jsonata) process.on('message', async ({ id, expression, input, timeoutMs }) => {
  const key = timeoutMs + '\\u0000' + expression;
  let compiled = parsed.get(key);
  if (!compiled) {
    try {
      compiled = jsonata(expression, { timeout: timeoutMs, stack: maxStack, RegexEngine: LinearRegExp });
    } catch (error) {
      return process.send({ id, error: failure(error, true) });
    }
    if (parsed.size >= maxParsed) parsed.delete(parsed.keys().next().value);
    parsed.set(key, compiled);
  }
  try {
    const result = await compiled.evaluate(input);
    const json = result === undefined ? undefined : JSON.stringify(result);
    process.send({ id, json: json === undefined ? 'null' : json });
  } catch (error) {
    process.send({ id, error: failure(error, false) });
  }
});
// The engine went away: nothing is left to answer.
process.on('disconnect', () => process.exit(0));
if (jsonata) process.send({ ready: true });
`;
