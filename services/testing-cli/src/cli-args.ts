import { parseArgs } from 'node:util';

export interface TestCommandOptions {
  processId: string;
  tags: string[];
  testCaseIds: string[];
  url: string;
  key: string;
  junitFile?: string;
  /** Between two reads of the batch's progress. */
  pollMs: number;
}

export class UsageError extends Error {
  override name = 'UsageError';
}

export const USAGE = `usage: weft test --process <id> [--tags a,b] [--ids id1,id2] [--url URL] [--key KEY] [--junit FILE] [--poll-ms N]

  --process   the process whose test cases run (required)
  --tags      run the cases with any of these tags (comma separated)
  --ids       run these test case ids (with --tags: the union)
  --url       Weft's base URL (default $WEFT_URL, else http://127.0.0.1:8080)
  --key       a system API key (default $WEFT_API_KEY; prefer the variable: arguments show in process lists)
  --junit     also write a JUnit XML report to FILE
  --poll-ms   how often progress is read (default 500)

Exit status: 0 when every case passed, 1 when any did not or none ran, 2 on a usage or connection error.`;

const list = (value: string | undefined): string[] =>
  (value ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);

/** Reads `weft test ...` arguments; throws UsageError with what is wrong. */
export function parseTestCommand(argv: readonly string[], env: NodeJS.ProcessEnv): TestCommandOptions {
  const [command, ...rest] = argv;
  if (command !== 'test') throw new UsageError(command ? `unknown command "${command}"` : 'no command given');
  let values;
  try {
    ({ values } = parseArgs({
      args: [...rest],
      options: {
        process: { type: 'string' },
        tags: { type: 'string' },
        ids: { type: 'string' },
        url: { type: 'string' },
        key: { type: 'string' },
        junit: { type: 'string' },
        'poll-ms': { type: 'string' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  if (!values.process) throw new UsageError('--process is required');
  const key = values.key ?? env.WEFT_API_KEY;
  if (!key) throw new UsageError('an API key is required: --key or WEFT_API_KEY');
  const pollMs = Number(values['poll-ms'] ?? 500);
  if (!Number.isInteger(pollMs) || pollMs < 10 || pollMs > 60_000) {
    throw new UsageError('--poll-ms must be an integer from 10 to 60000');
  }
  return {
    processId: values.process,
    tags: list(values.tags),
    testCaseIds: list(values.ids),
    url: (values.url ?? env.WEFT_URL ?? 'http://127.0.0.1:8080').replace(/\/+$/, ''),
    key,
    junitFile: values.junit,
    pollMs,
  };
}
