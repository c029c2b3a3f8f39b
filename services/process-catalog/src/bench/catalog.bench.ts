import 'reflect-metadata';
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { Actor } from '@weft/bus';
import type { HttpCall, HttpReply } from '@weft/contracts';
import { openDatabase, PostgresEventStore, type Database } from '@weft/event-store';
import { openCatalogApplication } from '../application/catalog-application.js';
import { catalogHttpHandlers } from '../adapters/http/catalog-http-handlers.js';
import type { CatalogHttpHandlers } from '../adapters/http/catalog-http-handler.js';

/**
 * `pnpm bench catalog`: latency of graph edits and version creation on a 200-node process, through
 * the catalog's handlers (decide, append, inline projection), on PGlite and, when
 * WEFT_BENCH_DATABASE_URL (or WEFT_TEST_DATABASE_URL) is set, on PostgreSQL.
 * Prints p50/p99; asserts nothing about time.
 */
const NODES = 200;
const EDITS = Number(process.env.WEFT_BENCH_EDITS ?? 300);
const VERSIONS = Number(process.env.WEFT_BENCH_VERSIONS ?? 50);

const percentile = (samples: number[], p: number): number => {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0;
};

const format = (name: string, samples: number[]): string =>
  `${name.padEnd(34)} n=${String(samples.length).padStart(4)}  p50=${percentile(samples, 50).toFixed(2).padStart(7)} ms  p99=${percentile(samples, 99).toFixed(2).padStart(7)} ms`;

function twoHundredNodeProcess() {
  const nodes = Array.from({ length: NODES }, (_, index) => {
    const type = index === 0 ? 'inputNode' : index === NODES - 1 ? 'outputNode' : 'scriptNode';
    const config: Record<string, unknown> =
      type === 'inputNode'
        ? { label: 'Input', triggerType: 'webhook' }
        : type === 'outputNode'
          ? { label: 'Output', fields: { last: `{{input["Step ${NODES - 2}"]["value"]}}` } }
          : {
              label: `Step ${index}`,
              code: `return { value: (input["${index === 1 ? 'Input' : `Step ${index - 1}`}"]?.value ?? 0) + 1 };`,
            };
    return { id: `n${index}`, type, position: { x: index * 50, y: 0 }, config };
  });
  const edges = nodes.slice(1).map((node, index) => ({ source_node_id: `n${index}`, target_node_id: node.id }));
  return { name: 'Bench 200', nodes, edges };
}

async function timed(samples: number[], work: () => Promise<HttpReply>): Promise<HttpReply> {
  const started = performance.now();
  const reply = await work();
  samples.push(performance.now() - started);
  if (reply.status >= 300) throw new Error(`unexpected ${reply.status}: ${JSON.stringify(reply.body)}`);
  return reply;
}

async function run(label: string, database: Database): Promise<void> {
  const store = await PostgresEventStore.open(database);
  const app = await openCatalogApplication(store, { secretKey: 'bench-secret-key-0123456789', dataDir: '.bench-tmp' });
  const handlers: CatalogHttpHandlers = catalogHttpHandlers(app);
  const org = randomUUID();
  const actor: Actor = { organizationId: org, userId: randomUUID(), userName: 'bench', system: false };
  const call = (name: keyof CatalogHttpHandlers, partial: Partial<HttpCall>): Promise<HttpReply> =>
    handlers[name]({ params: {}, query: {}, body: undefined, headers: {}, ...partial }, { actor });

  const create: number[] = [];
  const created = await timed(create, () =>
    call('createProcess', { params: { org_id: org }, body: twoHundredNodeProcess() }),
  );
  const process = created.body as { id: string; nodes: { id: string; config: Record<string, unknown> }[] };
  const moves: number[] = [];
  const configEdits: number[] = [];
  const addsAndDeletes: number[] = [];
  const versions: number[] = [];
  const lints: number[] = [];
  for (let index = 0; index < EDITS; index += 1) {
    const node = process.nodes[1 + (index % (NODES - 2))]!;
    await timed(moves, () =>
      call('updateNode', { params: { id: process.id, node_id: node.id }, body: { position: { x: index, y: index } } }),
    );
    if (index % 3 === 0) {
      await timed(configEdits, () =>
        call('updateNode', {
          params: { id: process.id, node_id: node.id },
          body: { config: { ...node.config, note: `edit ${index}` } },
        }),
      );
    }
    if (index % 5 === 0) {
      const added = await timed(addsAndDeletes, () =>
        call('addNode', {
          params: { id: process.id },
          body: { type: 'waitNode', config: { label: `Wait ${index}`, seconds: 1 } },
        }),
      );
      await timed(addsAndDeletes, () =>
        call('deleteNode', { params: { id: process.id, node_id: (added.body as { id: string }).id } }),
      );
    }
  }
  for (let index = 0; index < VERSIONS; index += 1) {
    await timed(versions, () =>
      call('createVersion', { params: { process_id: process.id }, body: { label: `v${index}` } }),
    );
  }
  for (let index = 0; index < 20; index += 1) {
    await timed(lints, () => call('lintProcess', { params: { id: process.id } }));
  }
  const events = await store.streamVersion(`process-${process.id}`);
  console.log(`\n${label}: 200-node process, ${events} events on its stream at the end`);
  console.log(format('create (200 nodes, 199 edges)', create));
  console.log(format('graph edit: move a node', moves));
  console.log(format('graph edit: change a node config', configEdits));
  console.log(format('graph edit: add or delete a node', addsAndDeletes));
  console.log(format('version create (full snapshot)', versions));
  console.log(format('lint', lints));
  await store.close();
}

async function main(): Promise<void> {
  await run('PGlite (in memory)', await openDatabase({ dataDir: 'memory://' }));
  const url = process.env.WEFT_BENCH_DATABASE_URL ?? process.env.WEFT_TEST_DATABASE_URL;
  if (!url) {
    console.log('\nPostgreSQL: skipped (set WEFT_BENCH_DATABASE_URL)');
    return;
  }
  const schema = `bench_catalog_${randomUUID().replace(/-/g, '').slice(0, 12)}`;
  const database = await openDatabase({ url, schema });
  try {
    await run(`PostgreSQL (schema ${schema})`, database);
  } finally {
    await database.db.schema.dropSchema(schema).ifExists().cascade().execute();
    await database.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
