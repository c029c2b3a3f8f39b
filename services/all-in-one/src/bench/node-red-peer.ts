import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { freePort } from '@weft/test-support';
import { WARM_UP_LOAD, type LoadLevel, type LoadTool } from './http-load.js';

/**
 * The peer of the engine benchmark: Node-RED running the same five-node flow (http in -> switch
 * amount > 100 -> change tier=high | tier=low -> http response), started by the shared peer script
 * shared/bench-peers/nodered-bench.sh. It installs node-red into $PEERS_DIR (default /tmp/peers)
 * from the npm registry, nothing in this workspace, and drives it with the same tool and flags
 * (loadgen.sh) as Weft is driven here.
 */
export const NODERED_VERSION = '5.0.7';

export interface PeerResult {
  levels: LoadLevel[];
  /** MiB after the load, as the script reports it */
  rss: number | undefined;
  version: string;
}

/** shared/bench-peers/nodered-bench.sh beside the workspace, or in WEFT_BENCH_PEERS_SCRIPTS; throws when missing. */
export function nodeRedScript(root: string): string {
  const script = join(
    process.env.WEFT_BENCH_PEERS_SCRIPTS ?? join(root, '..', 'shared', 'bench-peers'),
    'nodered-bench.sh',
  );
  if (!existsSync(script))
    throw new Error(`${script} is missing (set WEFT_BENCH_PEERS_SCRIPTS to the bench-peers folder)`);
  return script;
}

/** wrk's "Latency avg stdev max" line of each raw run, by connection count (the last run wins). */
function wrkMaxByConcurrency(raw: string): Map<number, number> {
  const found = new Map<number, number>();
  const toMs = (value: string): number => {
    const amount = Number.parseFloat(value);
    if (value.endsWith('us')) return amount / 1000;
    if (value.endsWith('ms')) return amount;
    if (value.endsWith('m')) return amount * 60_000;
    return amount * 1000;
  };
  for (const block of raw.split(/Running \d+s test @/).slice(1)) {
    const connections = Number(/(\d+) connections/.exec(block)?.[1]);
    const max = /Latency\s+\S+\s+\S+\s+(\S+)/.exec(block)?.[1];
    if (max) found.set(connections, toMs(max));
  }
  return found;
}

export async function runNodeRedPeer(
  root: string,
  tool: LoadTool,
  concurrencies: number[],
  seconds: number,
): Promise<PeerResult> {
  const script = nodeRedScript(root);
  const run = spawnSync('bash', [script], {
    encoding: 'utf8',
    timeout: (600 + concurrencies.length * (seconds + 70)) * 1000,
    env: {
      ...process.env,
      NODE_BIN_DIR: dirname(process.execPath),
      NODERED_VERSION,
      CONCS: concurrencies.join(' '),
      DURATION: String(seconds),
      WARMUP: String(WARM_UP_LOAD.seconds),
      NODERED_BENCH_PORT: String(await freePort()),
      LOADGEN: tool,
      // wrk's raw output on stderr: its max latency is not in the summary line.
      LOADGEN_RAW: '1',
    },
  });
  const maxima = wrkMaxByConcurrency(run.stderr);
  const levels = run.stdout
    .split('\n')
    .filter((line) => line.startsWith('peer=nodered '))
    .map((line): LoadLevel => {
      const field = (key: string): number => Number(new RegExp(`\\b${key}=([0-9.]+)`).exec(line)?.[1] ?? NaN);
      const concurrency = field('conc');
      return {
        concurrency,
        requests: field('requests'),
        rps: field('rps'),
        p50Ms: field('p50_ms'),
        p99Ms: field('p99_ms'),
        maxMs: maxima.get(concurrency),
        errors: field('errors'),
      };
    });
  if (levels.length === 0) throw new Error(`the Node-RED peer printed no results:\n${run.stdout}\n${run.stderr}`);
  const rss = /server RSS after load: (\d+) MiB/.exec(run.stderr)?.[1];
  return { levels, rss: rss === undefined ? undefined : Number(rss), version: NODERED_VERSION };
}
