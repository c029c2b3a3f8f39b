import { ScriptSandbox } from '../src/adapters/nodes/script-sandbox.js';

/** The documented script limits, at their defaults (docs/engine.md, scriptNode). */
describe('script sandbox limits at their defaults', () => {
  const sandbox = new ScriptSandbox();
  afterAll(() => sandbox.dispose());
  const org = crypto.randomUUID();
  const MiB = 1024 * 1024;

  test('a result of 16 MiB of JSON passes; one character more fails the node, naming the limit', async () => {
    // A string's JSON is its characters plus two quotes.
    const ofJsonLength = (chars: number) =>
      sandbox.run({
        organizationId: org,
        code: `return "x".repeat(${chars - 2});`,
        input: {},
        timeoutMs: 10_000,
        memoryMb: 256,
      });
    expect(((await ofJsonLength(16 * MiB)) as string).length).toBe(16 * MiB - 2);
    await expect(ofJsonLength(16 * MiB + 1)).rejects.toThrow(
      `script result is larger than ${16 * MiB} characters of JSON (WEFT_SCRIPT_OUTPUT_MAX_BYTES)`,
    );
  });
});
