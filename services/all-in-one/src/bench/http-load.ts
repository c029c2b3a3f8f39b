import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * The load generator of the engine benchmark, the same one the peer scripts in
 * shared/bench-peers/loadgen.sh use for Node-RED, so the ratio compares servers, not clients:
 * wrk (`-t1 -cN -dS --timeout 10s --latency`, installed with apt when missing and running as
 * root), else autocannon@8.0.0 installed under $PEERS_DIR/tools. The bodies are the peer script's
 * (bench-post.lua): `{"id":i,"amount":50|150,"customer":"bench"}`, alternating the two branches.
 * Here every answer is also read: one that is not 200 with a top-level `"status":"completed"`
 * counts as an error.
 */
export type LoadTool = 'wrk' | 'autocannon';

export interface LoadLevel {
  concurrency: number;
  requests: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  /** undefined when the tool did not report it */
  maxMs: number | undefined;
  errors: number;
}

const PEERS_DIR = process.env.PEERS_DIR ?? '/tmp/peers';

/** Untimed load before the levels, the same for Weft and the Node-RED peer (its script's WARMUP, at c=10). */
export const WARM_UP_LOAD = { concurrency: 10, seconds: 3 } as const;
const AUTOCANNON_DIR = join(PEERS_DIR, 'tools');

const onPath = (command: string): boolean => spawnSync('sh', ['-c', `command -v ${command}`]).status === 0;

/** wrk when it is there or can be installed (root), unless LOADGEN=autocannon; else autocannon. */
export function chooseLoadTool(): LoadTool {
  if (process.env.LOADGEN === 'autocannon') return 'autocannon';
  if (onPath('wrk')) return 'wrk';
  if (process.getuid?.() === 0) {
    console.log('wrk is missing: apt-get install -y wrk');
    spawnSync('apt-get', ['install', '-y', 'wrk'], { stdio: 'ignore', timeout: 300_000 });
    if (onPath('wrk')) return 'wrk';
  }
  if (!existsSync(join(AUTOCANNON_DIR, 'node_modules/autocannon'))) {
    console.log(`installing autocannon@8.0.0 into ${AUTOCANNON_DIR}`);
    mkdirSync(AUTOCANNON_DIR, { recursive: true });
    if (!existsSync(join(AUTOCANNON_DIR, 'package.json')))
      writeFileSync(join(AUTOCANNON_DIR, 'package.json'), '{"name":"peer-tools","private":true}\n');
    const installed = spawnSync('npm', ['install', '--no-audit', '--no-fund', 'autocannon@8.0.0'], {
      cwd: AUTOCANNON_DIR,
      stdio: 'ignore',
      timeout: 300_000,
    });
    if (installed.status !== 0) throw new Error('neither wrk nor autocannon could be installed');
  }
  return 'autocannon';
}

const WRK_SCRIPT = `
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local i = 0
request = function()
  i = i + 1
  local amount = (i % 2 == 0) and 150 or 50
  return wrk.format(nil, nil, nil, '{"id":' .. i .. ',"amount":' .. amount .. ',"customer":"bench"}')
end
-- A global, so done() can read it from the thread.
failed = 0
response = function(status, headers, body)
  -- The execution record's own status comes before node_states and output_data.
  if status ~= 200 or string.match(body, '"status":"(%a+)"') ~= "completed" then failed = failed + 1 end
end
local threads = {}
setup = function(thread) table.insert(threads, thread) end
done = function(summary, latency, requests)
  local n = 0
  for _, t in ipairs(threads) do n = n + t:get("failed") end
  local e = summary.errors
  io.write(string.format("bench requests=%d failed=%d socket_errors=%d p50_us=%d p99_us=%d max_us=%d\\n",
    summary.requests, n, e.connect + e.read + e.write + e.timeout,
    latency:percentile(50), latency:percentile(99), latency.max))
end
`;

const AUTOCANNON_SCRIPT = `
const autocannon = require('autocannon');
const [url, conc, dur, header, value] = process.argv.slice(1);
let i = 0, failed = 0;
const body = () => JSON.stringify({ id: ++i, amount: i % 2 === 0 ? 150 : 50, customer: 'bench' });
autocannon({ url, connections: +conc, duration: +dur, timeout: 10, method: 'POST',
  headers: { 'content-type': 'application/json', [header]: value },
  requests: [{ setupRequest: (r) => ({ ...r, body: body() }),
    onResponse: (status, text) => { if (status !== 200 || /"status":"(\\w+)"/.exec(text)?.[1] !== 'completed') failed++; } }],
}, (err, res) => {
  if (err) { console.error(err); process.exit(1); }
  console.log('bench ' + JSON.stringify({ requests: res.requests.total, rps: res.requests.average,
    p50: res.latency.p50, p99: res.latency.p99, max: res.latency.max, errors: res.errors + res.timeouts + failed }));
});
`;

let scriptDir: string | undefined;
const script = (name: string, text: string): string => {
  scriptDir ??= mkdtempSync(join(tmpdir(), 'weft-engine-bench-load-'));
  const file = join(scriptDir, name);
  if (!existsSync(file)) writeFileSync(file, text);
  return file;
};

const number = (line: string, key: string): number => Number(new RegExp(`${key}=([0-9.]+)`).exec(line)?.[1] ?? NaN);

/** POSTs at `url` with `concurrency` keep-alive connections for `seconds`, with one extra header (the API key). */
export function runHttpLoad(
  tool: LoadTool,
  url: string,
  header: [string, string],
  concurrency: number,
  seconds: number,
): LoadLevel {
  if (!url.startsWith('http://127.0.0.1:')) throw new Error(`refusing a load test of a non-loopback url: ${url}`);
  if (tool === 'wrk') {
    const args = ['-t1', `-c${concurrency}`, `-d${seconds}s`, '--timeout', '10s', '--latency'];
    args.push('-H', `${header[0]}: ${header[1]}`, '-s', script('weft-bench-post.lua', WRK_SCRIPT), url);
    const run = spawnSync('wrk', args, { encoding: 'utf8', timeout: (seconds + 60) * 1000 });
    const line = run.stdout.split('\n').find((l) => l.startsWith('bench '));
    const rps = Number(/Requests\/sec:\s+([0-9.]+)/.exec(run.stdout)?.[1] ?? NaN);
    if (!line || Number.isNaN(rps)) throw new Error(`wrk failed: ${run.stdout}${run.stderr}`);
    return {
      concurrency,
      requests: number(line, 'requests'),
      rps,
      p50Ms: number(line, 'p50_us') / 1000,
      p99Ms: number(line, 'p99_us') / 1000,
      maxMs: number(line, 'max_us') / 1000,
      errors: number(line, 'failed') + number(line, 'socket_errors'),
    };
  }
  const run = spawnSync(
    process.execPath,
    ['-e', AUTOCANNON_SCRIPT, url, String(concurrency), String(seconds), header[0], header[1]],
    {
      encoding: 'utf8',
      env: { ...process.env, NODE_PATH: join(AUTOCANNON_DIR, 'node_modules') },
      timeout: (seconds + 60) * 1000,
    },
  );
  const line = run.stdout.split('\n').find((l) => l.startsWith('bench '));
  if (!line) throw new Error(`autocannon failed: ${run.stdout}${run.stderr}`);
  const result = JSON.parse(line.slice('bench '.length)) as Record<string, number>;
  return {
    concurrency,
    requests: result.requests ?? 0,
    rps: result.rps ?? 0,
    p50Ms: result.p50 ?? NaN,
    p99Ms: result.p99 ?? NaN,
    maxMs: result.max,
    errors: result.errors ?? 0,
  };
}
