/**
 * Engine benchmark as a user calls Weft: `POST /api/v1/processes/test/:processId` of the five-node
 * process (input -> conditional amount > 100 -> one of two scripts -> Return to Client output)
 * through the gateway's HTTP API, the process catalog in the loop, at concurrency 1, 10 and 50 with
 * keep-alive connections (wrk, else autocannon: http-load.ts), embedded and distributed Weft started
 * from the built dist (bench-deployment.ts), after the process has a stored history of 100,000
 * executions (seed-history.ts) and an untimed warm-up under load (3 s at c=10, as the Node-RED peer
 * gets it). Prints requests/s, p50/p99/max latency, errors (answers that are
 * not 200 with a completed execution) and the RSS of every Weft process; asserts nothing.
 * `--peer node-red` runs Node-RED 5 with the equivalent flow in the same run, with the same load
 * tool, and prints the ratio. `--internals` then runs the in-process engine benchmark
 * (services/engine/dist/bench/engine.bench.js: engine without HTTP, overhead per node, history
 * pages, parked executions).
 * Run: pnpm bench engine [--mode=embedded|distributed] [--quick] [--peer node-red] [--seconds=N]
 *      [--seed=N] [--stats-rows=N] [--engines=N] [--internals] [--hold]
 * `--engines` sets the engine processes of the distributed Weft (default 2, as docker-compose.yml).
 * After the levels, `GET /api/v1/processes/execution-stats/:id` of a second process with
 * `--stats-rows` stored executions (1,000,000; 100,000 with --quick; 0 skips it), one call at a
 * time: p50/p95/p99 (execution-stats-over-http.ts).
 * `--hold` stops after the history is stored and keeps Weft running (URL, key and process printed)
 * until Ctrl-C, for profiling or loading it by hand.
 */
import { spawnSync } from 'node:child_process';
import { loadavg } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ms, printTable } from '@weft/engine/bench';
import { startBenchDeployment, type BenchDeployment, type BenchMode } from './bench-deployment.js';
import { executionStatsOverHttp, type StatsLatency } from './execution-stats-over-http.js';
import { chooseLoadTool, runHttpLoad, WARM_UP_LOAD, type LoadLevel } from './http-load.js';
import { nodeRedScript, runNodeRedPeer, type PeerResult } from './node-red-peer.js';
import { seedHistory } from './seed-history.js';
import { benchClient, fiveNodeGraph, type BenchCall } from './webhook-bench-process.js';

const root = join(dirname(fileURLToPath(import.meta.url)), '../../../..');
const args = process.argv.slice(2);
const flag = (name: string): string | undefined => {
  const inline = args.find((arg) => arg.startsWith(`--${name}=`));
  if (inline) return inline.slice(name.length + 3);
  const at = args.indexOf(`--${name}`);
  return at >= 0 && args[at + 1] && !args[at + 1]?.startsWith('--') ? args[at + 1] : undefined;
};
const quick = args.includes('--quick');
const modeArg = flag('mode');
const modes: BenchMode[] =
  modeArg === 'embedded' || modeArg === 'distributed' ? [modeArg] : ['embedded', 'distributed'];
const peer = flag('peer');
if (peer !== undefined && peer !== 'node-red') {
  console.error(`unknown peer "${peer}": only node-red`);
  process.exit(2);
}
const SECONDS = Number(flag('seconds') ?? (quick ? 5 : 15));
const STORED = Number(flag('seed') ?? (quick ? 10_000 : 100_000));
const CONCURRENCY = [1, 10, 50];
/** Stored executions of the process whose statistics are read (after the load levels); 0 skips it. */
const STATS_ROWS = Number(flag('stats-rows') ?? (quick ? 100_000 : 1_000_000));
const WARM_UP = 200;
const ENGINES = Number(flag('engines') ?? 2);
if (!Number.isInteger(ENGINES) || ENGINES < 1) {
  console.error(`--engines must be a whole number of at least 1, not "${flag('engines')}"`);
  process.exit(2);
}

interface ModeResult {
  mode: BenchMode;
  levels: { level: LoadLevel; weftRss: number }[];
  memory: string[];
  history: string;
  /** The machine's 1-minute load average when the load started and ended (the machine is shared). */
  load: string;
  stats?: StatsLatency;
}

const mib = (value: number): string => `${value.toFixed(0)} MiB`;

async function json(call: BenchCall, method: string, path: string, body: unknown, expected: number) {
  const answer = await call(method, path, body);
  if (answer.status !== expected)
    throw new Error(`${method} ${path} answered ${answer.status}: ${JSON.stringify(answer.body)}`);
  return answer.body as Record<string, unknown>;
}

/** An organization and a user's API key (through the system key), a collection and the process. */
async function setUp(weft: BenchDeployment): Promise<{ key: string; processId: string; org: string }> {
  const system = benchClient(weft.baseUrl, weft.systemKey);
  const org = String((await json(system, 'POST', '/api/v1/organizations', { name: 'Bench' }, 201)).id);
  const created = await json(
    system,
    'POST',
    `/api/v1/api-keys/by-org/${org}`,
    { name: 'bench', userName: 'Bench', userId: '6f1e6a55-5c5b-4a7e-9f39-3f8f0b0a3c11' },
    201,
  );
  const key = String(created.key);
  const user = benchClient(weft.baseUrl, key);
  const collection = String(
    (await json(user, 'POST', `/api/v1/process-collections/by-org/${org}`, { name: 'Bench' }, 201)).id,
  );
  const processId = String(
    (await json(user, 'POST', `/api/v1/processes/by-org/${org}`, { name: 'five nodes', ...fiveNodeGraph(true) }, 201))
      .id,
  );
  await json(user, 'POST', `/api/v1/process-collections/${collection}/add-process/${processId}`, undefined, 200);
  return { key, processId, org };
}

/** Runs `count` executions through the API, 10 at a time; fails unless both branches answer right. */
async function warmUp(call: BenchCall, processId: string, count: number): Promise<void> {
  const expected = (amount: number) => (amount > 100 ? { big: amount * 0.9 } : { small: amount + 5 });
  let next = 0;
  await Promise.all(
    Array.from({ length: 10 }, async () => {
      for (let i = next++; i < count; i = next++) {
        const amount = i % 2 === 0 ? 150 : 50;
        const body = await json(call, 'POST', `/api/v1/processes/test/${processId}`, { id: i, amount }, 200);
        const result = (body.output_data as { Result?: unknown } | undefined)?.Result;
        if (body.status !== 'completed' || JSON.stringify(result) !== JSON.stringify(expected(amount)))
          throw new Error(`the process answered ${JSON.stringify(body).slice(0, 500)}`);
      }
    }),
  );
}

async function benchMode(mode: BenchMode, tool: 'wrk' | 'autocannon'): Promise<ModeResult> {
  console.log(`[${mode}] starting Weft from the built dist`);
  const weft = await startBenchDeployment(mode, root, { engines: ENGINES });
  try {
    const { key, processId, org } = await setUp(weft);
    const call = benchClient(weft.baseUrl, key);
    console.log(`[${mode}] warm-up: ${WARM_UP} executions through the API`);
    await warmUp(call, processId, WARM_UP);
    const seedStart = performance.now();
    const added = await seedHistory(weft.databaseUrl, processId, STORED);
    const seeded = `${added.toLocaleString('en-US')} copied in ${((performance.now() - seedStart) / 1000).toFixed(0)} s`;
    const storedNow = async () => {
      const page = await json(call, 'GET', `/api/v1/processes/executions/${processId}?pageSize=1`, undefined, 200);
      return Number(page.total).toLocaleString('en-US');
    };
    const url = `${weft.baseUrl}/api/v1/processes/test/${processId}`;
    if (args.includes('--hold')) {
      console.log(`[${mode}] ${await storedNow()} stored executions (${seeded})`);
      await holdUntilInterrupted(url, key);
    }
    // Steady state, as the Node-RED peer gets it: the same load, untimed, before the levels (200
    // calls leave the engines' code partly unoptimized: the c=1 level measured the JIT warming up).
    const warm = runHttpLoad(tool, url, ['x-api-key', key], WARM_UP_LOAD.concurrency, WARM_UP_LOAD.seconds);
    console.log(
      `[${mode}] warm-up under load: ${warm.requests} requests at c=${warm.concurrency}, ${warm.errors} errors`,
    );
    // Counted after the warm-up, whose runs are part of the history the levels start with.
    const history = `${await storedNow()} stored executions before the load (${seeded}, then the warm-up)`;
    console.log(`[${mode}] ${history}`);
    const levels: ModeResult['levels'] = [];
    const loadBefore = loadavg()[0]?.toFixed(1);
    for (const concurrency of CONCURRENCY) {
      console.log(`[${mode}] concurrency ${concurrency}, ${SECONDS} s`);
      const level = runHttpLoad(tool, url, ['x-api-key', key], concurrency, SECONDS);
      const weftRss = weft
        .memory()
        .filter((reading) => !reading.name.includes('PostgreSQL') && reading.name !== 'nats-server')
        .reduce((sum, reading) => sum + reading.rss, 0);
      levels.push({ level, weftRss });
      await new Promise((r) => setTimeout(r, 2000));
    }
    const memory = weft.memory().map((reading) => `${reading.name} ${mib(reading.rss)}`);
    const load = `${loadBefore} -> ${loadavg()[0]?.toFixed(1)}`;
    let stats: StatsLatency | undefined;
    if (STATS_ROWS > 0) {
      console.log(`[${mode}] execution statistics of a process with ${STATS_ROWS.toLocaleString('en-US')} executions`);
      stats = await executionStatsOverHttp(call, weft.databaseUrl, org, STATS_ROWS);
    }
    return { mode, levels, memory, history, load, stats };
  } finally {
    await weft.stop();
  }
}

/** `--hold`: Weft stays up for loading by hand until SIGINT/SIGTERM, then stops as after a run. */
async function holdUntilInterrupted(url: string, key: string): Promise<void> {
  console.log(`holding: POST ${url} with x-api-key: ${key}; Ctrl-C stops Weft`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  throw new Error('interrupted while holding');
}

const row = (level: LoadLevel, rss: string): string[] => [
  String(level.concurrency),
  level.rps.toFixed(0),
  ms(level.p50Ms),
  ms(level.p99Ms),
  level.maxMs === undefined ? 'n/a' : ms(level.maxMs),
  `${level.errors}/${level.requests}`,
  rss,
];
const HEADER = ['concurrency', 'requests/s', 'p50', 'p99', 'max', 'errors', 'RSS'];

function printMode(result: ModeResult): void {
  printTable(
    `Weft ${result.mode}: POST /api/v1/processes/test/:id, five-node process, ${result.history}; RSS = Weft's Node processes after the level`,
    HEADER,
    result.levels.map(({ level, weftRss }) => row(level, mib(weftRss))),
  );
  console.log(`RSS after the load: ${result.memory.join(', ')}; load average (1 min): ${result.load}\n`);
  const { stats } = result;
  if (stats)
    printTable(
      `Weft ${result.mode}: GET /api/v1/processes/execution-stats/:id, one call at a time, 200 calls`,
      ['stored executions', 'p50', 'p95', 'p99', 'seeded in', 'load average'],
      [
        [
          stats.rows.toLocaleString('en-US'),
          stats.p50,
          stats.p95,
          stats.p99,
          `${stats.seedSeconds.toFixed(0)} s`,
          stats.load,
        ],
      ],
    );
}

function printPeer(nodeRed: PeerResult, results: ModeResult[]): void {
  const rss = nodeRed.rss === undefined ? 'n/a' : mib(nodeRed.rss);
  printTable(
    `Node-RED ${nodeRed.version}: the same flow (http in, switch, change, http response), nothing stored; RSS after all levels`,
    HEADER,
    nodeRed.levels.map((level) => row(level, rss)),
  );
  const ratios = CONCURRENCY.map((concurrency) => {
    const theirs = nodeRed.levels.find((level) => level.concurrency === concurrency)?.rps ?? NaN;
    return [
      String(concurrency),
      ...results.map((result) => {
        const ours = result.levels.find(({ level }) => level.concurrency === concurrency)?.level.rps ?? NaN;
        return (ours / theirs).toFixed(3);
      }),
    ];
  });
  printTable(
    'Ratio: Weft requests/s / Node-RED requests/s',
    ['concurrency', ...results.map((result) => result.mode)],
    ratios,
  );
}

async function main(): Promise<void> {
  // Before minutes of Weft: the peer's script must be there.
  if (peer) nodeRedScript(root);
  const tool = chooseLoadTool();
  console.log(
    `engine benchmark over HTTP (${quick ? 'quick' : 'full'}): ${SECONDS} s per level, ${STORED.toLocaleString('en-US')} stored executions, ${tool}, Node ${process.version}, modes: ${modes.join(', ')}${peer ? ', peer: Node-RED' : ''}`,
  );
  const results: ModeResult[] = [];
  for (const mode of modes) {
    const result = await benchMode(mode, tool);
    results.push(result);
    printMode(result);
  }
  if (peer) {
    console.log(`[node-red] running the peer flow (installs node-red into ${process.env.PEERS_DIR ?? '/tmp/peers'})`);
    const loadBefore = loadavg()[0]?.toFixed(1);
    printPeer(await runNodeRedPeer(root, tool, CONCURRENCY, SECONDS), results);
    console.log(`load average (1 min) during Node-RED: ${loadBefore} -> ${loadavg()[0]?.toFixed(1)}`);
  }

  if (args.includes('--internals')) {
    const forwarded = args.filter((arg) => arg === '--quick' || arg.startsWith('--mode='));
    const internals = spawnSync(
      process.execPath,
      [join(root, 'services/engine/dist/bench/engine.bench.js'), ...forwarded],
      { stdio: 'inherit' },
    );
    if (internals.status !== 0) process.exit(internals.status ?? 1);
  }
  process.exit(0);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
