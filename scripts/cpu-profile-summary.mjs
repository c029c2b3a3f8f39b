#!/usr/bin/env node
// Where a server's main thread spends its time, per request, from a `node --cpu-prof` profile.
//   node scripts/cpu-profile-summary.mjs <file.cpuprofile> <requests> [lastSeconds] [--functions]
// Each sample goes to the nearest frame of Weft's own code on its stack (services/, libs/,
// contracts/), so time spent inside a library counts for the code that called it; samples with
// no such frame go to the leaf's package. With lastSeconds, only the last lastSeconds of the
// profile before its final second (the shutdown) count: start the load right after the server,
// stop the server with SIGINT right after the load. --functions lists the top functions by self
// time instead.
import { readFileSync } from 'node:fs';

const [file, requestsArg, lastSecondsArg] = process.argv.slice(2).filter((arg) => !arg.startsWith('--'));
if (!file || !requestsArg) {
  console.error('usage: cpu-profile-summary.mjs <file.cpuprofile> <requests> [lastSeconds] [--functions]');
  process.exit(2);
}
const requests = Number(requestsArg);
const profile = JSON.parse(readFileSync(file, 'utf8'));
const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
const parents = new Map();
for (const node of profile.nodes) for (const child of node.children ?? []) parents.set(child, node.id);

const AREAS = [
  [/services\/gateway|fastify|find-my-way|avvio/, 'gateway (HTTP, API key, routing)'],
  [/services\/engine\/(dist|src)\/(projections|adapters\/postgres)/, 'engine read models and commit'],
  [/services\/engine\/(dist|src)\/adapters\/nodes|isolated-vm/, 'engine nodes (script sandbox, ...)'],
  [/services\/engine/, 'engine run (API, decide/evolve, runner, writer)'],
  [/services\/process-catalog/, 'process catalog'],
  [/services\/(trigger|testing)/, 'trigger and testing services'],
  [/libs\/event-store\/(dist|src)\/(outbox|subscriptions)/, 'outbox relay and checkpoints'],
  [/libs\/event-store/, 'event store (append, reads)'],
  [/libs\/bus|@nestjs|rxjs|contracts\/(dist|src)\/bus/, 'bus (transport, JSON copies)'],
  [/libs\/observability|opentelemetry|pino/, 'observability (spans, logs)'],
  [/contracts|ajv/, 'contracts (validation)'],
  [/\/pg\/|pg-protocol|pg-pool|pg-types|postgres-date|kysely/, 'pg driver and kysely'],
];
const SPECIAL = { '(garbage collector)': 'garbage collection', '(idle)': 'idle', '(program)': 'V8 (program)' };
const ownCode = (url) => /\/(services|libs|contracts)\//.test(url) && !url.includes('node_modules');
const areaOf = (url) => AREAS.find(([pattern]) => pattern.test(url))?.[1];

function sampleArea(leaf) {
  if (Object.hasOwn(SPECIAL, leaf.callFrame.functionName)) return SPECIAL[leaf.callFrame.functionName];
  for (let id = leaf.id; id !== undefined; id = parents.get(id)) {
    const { url } = nodes.get(id).callFrame;
    if (ownCode(url)) return areaOf(url) ?? 'other own code';
  }
  const { url, functionName } = leaf.callFrame;
  if (/writev|writeBuffer|writeUtf8String|readv|stream|net|http/.test(`${url} ${functionName}`)) return 'socket I/O';
  return areaOf(url) ?? (url.startsWith('node:') || url === '' ? 'Node internals and native' : 'other packages');
}

const end = profile.timeDeltas.reduce((sum, delta) => sum + delta, 0);
const lastMicros = Number(lastSecondsArg ?? 0) * 1e6;
const [from, to] = lastMicros > 0 ? [end - lastMicros - 1e6, end - 1e6] : [0, end];
const totals = new Map();
let at = 0;
for (let index = 0; index < profile.samples.length; index++) {
  at += profile.timeDeltas[index];
  if (at < from || at > to) continue;
  const leaf = nodes.get(profile.samples[index]);
  const key = process.argv.includes('--functions')
    ? `${leaf.callFrame.functionName || '(anonymous)'} ${leaf.callFrame.url.replace(/^.*node_modules\//, '').replace(/^.*\/(services|libs|contracts)\//, '$1/')}:${leaf.callFrame.lineNumber + 1}`
    : sampleArea(leaf);
  totals.set(key, (totals.get(key) ?? 0) + profile.timeDeltas[index]);
}
const idle = totals.get('idle') ?? totals.get('(idle) :0') ?? 0;
const busy = [...totals.values()].reduce((sum, value) => sum + value, 0) - idle;
console.log(
  `busy ${(busy / 1e6).toFixed(1)} s, idle ${(idle / 1e6).toFixed(1)} s, ${(busy / 1000 / requests).toFixed(2)} ms busy per request`,
);
for (const [key, micros] of [...totals].sort((a, b) => b[1] - a[1]).slice(0, 40)) {
  if (micros === idle) continue;
  console.log(
    `${(micros / 1000 / requests).toFixed(3).padStart(8)} ms ${((100 * micros) / busy).toFixed(1).padStart(5)}%  ${key}`,
  );
}
