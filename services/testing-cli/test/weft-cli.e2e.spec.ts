import { spawn, spawnSync } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DEPLOYMENT_START_TIMEOUT_MS, deploymentKind } from '../../all-in-one/test/support/deployment.js';
import { startTestingDeployment, type TestingStack } from '../../testing/test/support/testing-stack.js';

const cliRoot = resolve(__dirname, '..');
const fromSources = join(cliRoot, 'bin', 'weft-source.mjs');
const fromBuild = join(cliRoot, 'dist', 'main.js');

/** Runs the CLI as CI would and collects its output and exit status. */
const weft = (entry: string, args: string[], env: Record<string, string>) =>
  new Promise<{ code: number | null; stdout: string; stderr: string }>((done) => {
    const child = spawn(process.execPath, ['--no-warnings', entry, ...args], {
      env: { PATH: process.env.PATH ?? '', ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('close', (code) => done({ code, stdout, stderr }));
  });

beforeAll(() => {
  // The npx-style entry is the built output: build just this package.
  const built = spawnSync(process.execPath, [
    require.resolve('typescript/bin/tsc'),
    '-p',
    join(cliRoot, 'tsconfig.build.json'),
  ]);
  if (built.status !== 0) throw new Error(`CLI build failed: ${built.stdout.toString()}${built.stderr.toString()}`);
}, 120_000);

/** `weft test` against Weft as deployed (both deployments in CI): progress, summary, JUnit file, exit status. */
describe(`weft test CLI (${deploymentKind()})`, () => {
  let stack: TestingStack;
  let processId: string;
  let alpha: string;
  let workDir: string;

  beforeAll(async () => {
    workDir = await mkdtemp(join(tmpdir(), 'weft-cli-'));
    stack = await startTestingDeployment();
    processId = await stack.createProcess(
      'Cli',
      [
        { id: 'in', type: 'inputNode', config: { label: 'In', triggerType: 'webhook' } },
        { id: 'mid', type: 'scriptNode', config: { label: 'Echo', code: 'return { n: input.In.n };' } },
        { id: 'out', type: 'outputNode', config: { label: 'Out', fields: { n: '{{input["Echo"]["n"]}}' } } },
      ],
      [
        { source_node_id: 'in', target_node_id: 'mid' },
        { source_node_id: 'mid', target_node_id: 'out' },
      ],
    );
    const inputNodeId = await stack.nodeId(processId, 'In');
    const schema = { type: 'object', properties: { Out: { properties: { n: { type: 'number', maximum: 10 } } } } };
    const create = async (name: string, n: number, disabled = false) => {
      const created = await stack.as(stack.userKey)('POST', `/api/v1/test-cases/by-process/${processId}`, {
        name,
        inputNodeId,
        inputData: { n },
        expectedOutputSchema: schema,
        tags: ['ci'],
        disabled,
      });
      return created.body.id as string;
    };
    alpha = await create('alpha', 1);
    await create('beta', 20);
    await create('gamma', 1, true);
  }, DEPLOYMENT_START_TIMEOUT_MS);
  afterAll(async () => {
    await stack?.stop();
    await rm(workDir, { recursive: true, force: true });
  });

  const env = () => ({ WEFT_URL: stack.baseUrl, WEFT_API_KEY: stack.systemKey });

  test('prints a line per case, the table and the pass rate, writes JUnit, exits 1 when a case failed', async () => {
    const junit = join(workDir, 'report.xml');
    const result = await weft(
      fromSources,
      ['test', '--process', processId, '--tags', 'ci', '--junit', junit, '--poll-ms', '20'],
      env(),
    );
    expect(result.stderr).toBe('');
    expect(result.code).toBe(1);
    const lines = result.stdout.split('\n');
    expect(lines).toEqual(
      expect.arrayContaining([
        'skipped gamma (disabled)',
        expect.stringMatching(/^\[1\/2\] passed {2}alpha \(\d+\.\d\ds\)$/),
        expect.stringMatching(/^\[2\/2\] failed {2}beta \(\d+\.\d\ds\) - \$\.Out\.n must be <= 10$/),
        expect.stringMatching(/^Case +Status +Duration +First violation$/),
        expect.stringMatching(/^beta +failed +\d+\.\d\ds +\$\.Out\.n must be <= 10$/),
        'pass rate 50.0% (1/2 passed, 1 failed, 0 error, 0 timeout, 1 skipped)',
        `JUnit report written to ${junit}`,
      ]),
    );
    const xml = await readFile(junit, 'utf8');
    expect(xml).toContain('<testsuite name="weft process');
    expect(xml).toContain('tests="3" failures="1" errors="0" skipped="1"');
    expect(xml).toMatch(/<testcase name="alpha" classname="weft\.process\.[0-9a-f-]+" time="\d+\.\d{3}"\/>/);
    expect(xml).toContain(
      '<failure message="$.Out.n must be &lt;= 10" type="failed">$.Out.n must be &lt;= 10</failure>',
    );
    expect(xml).toContain('<skipped message="disabled"/>');
  });

  test('the built output runs the chosen ids and exits 0 when all pass', async () => {
    const result = await weft(fromBuild, ['test', '--process', processId, '--ids', alpha, '--poll-ms', '20'], env());
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('pass rate 100.0% (1/1 passed, 0 failed, 0 error, 0 timeout, 0 skipped)');
  });

  test('tags that choose no case: exit 1, saying so', async () => {
    const result = await weft(fromSources, ['test', '--process', processId, '--tags', 'no-such-tag'], env());
    expect(result.code).toBe(1);
    expect(result.stdout).toContain('no test case ran: check --process, --tags and --ids');
  });

  test('a key that is not a system key: exit 2 with the refusal', async () => {
    const result = await weft(fromBuild, ['test', '--process', processId], { ...env(), WEFT_API_KEY: stack.userKey });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('answered 403');
  });
});
