#!/usr/bin/env node
// `pnpm bench <name>`: builds the workspace, then runs that benchmark's compiled file.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const benches = {
  'event-store': 'libs/event-store/dist/bench/event-store.bench.js',
  catalog: 'services/process-catalog/dist/bench/catalog.bench.js',
  engine: 'services/all-in-one/dist/bench/engine-http.bench.js',
  nodes: 'services/engine/dist/bench/nodes.bench.js',
  webhook: 'services/all-in-one/dist/bench/webhook.bench.js',
};
const names = Object.keys(benches).join(', ');
const name = process.argv[2];
const file = benches[name];
if (!file) {
  console.error(`usage: pnpm bench <name>; ${name ? `unknown benchmark "${name}"; ` : ''}known: ${names}`);
  process.exit(2);
}

const build = spawnSync('pnpm', ['-r', 'run', 'build'], { cwd: root, stdio: 'inherit' });
if (build.status !== 0) {
  console.error(`pnpm bench: the workspace build failed (exit ${build.status}); not running "${name}"`);
  process.exit(build.status ?? 1);
}
if (!existsSync(join(root, file))) {
  console.error(`pnpm bench: ${file} was not built (is "${name}" implemented yet?); known: ${names}`);
  process.exit(1);
}
const run = spawnSync(process.execPath, [join(root, file), ...process.argv.slice(3)], { cwd: root, stdio: 'inherit' });
process.exit(run.status ?? 1);
