import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { loadConfig } from '@weft/config';
import { openConfiguredDatabase } from '@weft/runtime';
import type { RunningWeft } from '../src/weft-runtime.js';
import { BOOTSTRAP_KEY, client } from './weft-harness.js';
import { startWeftIn, WEFT_MODES, type WeftUnderTest } from './weft-modes.js';

/**
 * `pnpm rebuild-read-models`, run as its package.json script says, on the data of a stopped Weft
 * whose read models were emptied: the gateway's, the catalog's and the engine's come back as they were.
 */
const root = resolve(__dirname, '../../..');
const command = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> })
  .scripts['rebuild-read-models']!;
const READ_MODELS = [
  'gateway_organizations',
  'gateway_api_keys',
  'catalog_processes',
  'catalog_process_versions',
  'engine_executions',
  'engine_node_states',
  'engine_execution_counts',
  'engine_execution_durations',
  'engine_execution_failed_nodes',
  'engine_execution_errors',
];

const runCommand = (env: Record<string, string>): Promise<{ code: number | null; output: string }> =>
  new Promise((done) => {
    const child = spawn('sh', ['-c', command], { cwd: root, env: { ...process.env, NODE_OPTIONS: '', ...env } });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('close', (code) => done({ code, output }));
  });

describe.each(WEFT_MODES)('pnpm rebuild-read-models (%s)', (mode) => {
  let under: WeftUnderTest;
  beforeAll(async () => {
    const script = join(root, 'services/all-in-one/dist/rebuild-read-models.js');
    if (!existsSync(script)) throw new Error(`${script} is missing: run \`pnpm build\` before the e2e tests`);
    under = await startWeftIn(mode);
  }, 60_000);
  afterAll(async () => {
    await under?.dispose();
  });

  test('rebuilds every read model, the gateway keys included, from the events alone', async () => {
    const system = client(under.weft.url, BOOTSTRAP_KEY);
    const org = (await system('POST', '/api/v1/organizations', { name: 'Rebuilt' })).body.id as string;
    const issue = async (name: string) =>
      (await system('POST', `/api/v1/api-keys/by-org/${org}`, { name, userName: name, userId: randomUUID() })).body;
    const kept = await issue('kept');
    const revoked = await issue('revoked');
    expect((await system('DELETE', `/api/v1/api-keys/by-id/${revoked.id}`)).status).toBe(204);
    const user = (weft: RunningWeft) => client(weft.url, kept.key);

    const process = await user(under.weft)('POST', `/api/v1/processes/by-org/${org}`, {
      name: 'Rebuild me',
      nodes: [
        { id: 'in', type: 'inputNode', config: { label: 'In', triggerType: 'manual' } },
        {
          id: 'check',
          type: 'scriptNode',
          config: { label: 'Check', code: 'if (input.In.fail) throw new Error("no"); return 1;' },
        },
      ],
      edges: [{ source_node_id: 'in', target_node_id: 'check' }],
    });
    expect(process.status).toBe(201);
    const id = process.body.id as string;
    expect((await user(under.weft)('POST', `/api/v1/processes/versions/${id}`, { label: 'v1' })).status).toBe(201);
    for (const fail of [false, true]) {
      expect((await user(under.weft)('POST', `/api/v1/processes/test/${id}`, { fail })).status).toBe(200);
    }

    const answers = async (weft: RunningWeft) => {
      const get = async (path: string) => {
        const answer = await user(weft)('GET', path);
        return [path, answer.status, answer.body];
      };
      const executions = await get(`/api/v1/processes/executions/${id}`);
      const items = (executions[2] as { items: Array<{ id: string }> }).items;
      return [
        await get(`/api/v1/organizations/${org}`),
        await get(`/api/v1/api-keys/by-org/${org}`),
        await get(`/api/v1/processes/by-id/${id}`),
        await get(`/api/v1/processes/by-org/${org}`),
        await get(`/api/v1/processes/versions/${id}`),
        executions,
        await get(`/api/v1/processes/execution-stats/${id}`),
        ...(await Promise.all(items.map((item) => get(`/api/v1/processes/execution/${item.id}`)))),
      ];
    };
    const tables = async (weft: RunningWeft) => {
      const dump: Record<string, unknown[]> = {};
      for (const table of READ_MODELS) {
        const rows: unknown[] = await weft.store.db.selectFrom(table).selectAll().execute();
        dump[table] = rows.map((row) => JSON.stringify(row)).sort();
      }
      return dump;
    };
    const before = { answers: await answers(under.weft), tables: await tables(under.weft) };
    expect(before.tables.gateway_api_keys).toHaveLength(3); // bootstrap, kept, revoked
    expect(before.tables.engine_executions).toHaveLength(2);
    // The statistics read models hold the run that failed at Check, so their rebuild is compared too.
    expect(before.tables.engine_execution_failed_nodes).toHaveLength(1);
    expect(before.tables.engine_execution_errors).toHaveLength(1);

    await under.stopAll();
    const database = await openConfiguredDatabase(loadConfig(under.env));
    try {
      for (const table of READ_MODELS) await database.db.deleteFrom(table).execute();
    } finally {
      await database.close();
    }
    const rebuilt = await runCommand(under.env);
    expect([rebuilt.code, rebuilt.output]).toEqual([0, expect.stringMatching(/rebuilt \d+ read models/)]);

    const after = await under.startReplica();
    expect({ answers: await answers(after), tables: await tables(after) }).toEqual(before);
    expect((await client(after.url, revoked.key)('GET', `/api/v1/api-keys/by-org/${org}`)).status).toBe(401);
  });
});
