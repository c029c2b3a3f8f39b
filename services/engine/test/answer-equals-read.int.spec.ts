import { engineHttp, type ExecutionRecord, type ProcessRecord } from '@weft/contracts';
import { sql } from 'kysely';
import { GraphBuilder } from './fixtures/graph-builder.js';
import { actorOf, startEngineHarness, type EngineHarness, type EngineMode } from './support/engine-harness.js';

/**
 * A synchronous answer built from the rows of its one commit (RecentlyFinishedRows) is, byte for
 * byte, what GET /processes/execution/:id returns afterwards, for awkward values and graphs.
 */
const modes: EngineMode[] = ['embedded', 'distributed'];

const sortedJson = (value: unknown): string =>
  JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.keys(v)
            .sort()
            .map((k) => [k, (v as Record<string, unknown>)[k]]),
        )
      : v,
  );

const WEIRD = `JSON.parse(${JSON.stringify(
  JSON.stringify({
    b: 1,
    a: 2,
    '10': 'ten',
    '9': 'nine',
    __proto__: { polluted: true },
    constructor: { prototype: 1 },
    toString: 'x',
    unicode: 'héllo 😀 \u2028\u2029 e\u0301 \ud83d\ude00 \t\n"\\',
    big: 1e21,
    huge: 1.7976931348623157e308,
    tiny: 5e-324,
    small: 1e-7,
    unsafe: Number('9007199254740993'),
    negZero: -0,
    float: 0.1 + 0.2,
    nested: [[[]], [{}], [[1, [2, [3, null]]]]],
    empty: {},
    emptyArr: [],
    emptyStr: '',
    nul: null,
    bool: false,
    // Keys jsonb orders by the length and bytes of their UTF-8: 'é' and 'ab' are 2 bytes, '\uffff' 3, '😀' 4.
    é: 1,
    ab: 2,
    '\uffff': 3,
    'z😀': 4,
    '😀': 5,
  }),
)})`;

describe.each(modes)('an answer from memory and the read back (%s)', (mode) => {
  let harness: EngineHarness;
  const org = crypto.randomUUID();
  const actor = actorOf(org);
  beforeAll(async () => {
    harness = await startEngineHarness(mode, { syncRunHoldMs: 5000 });
  });
  afterAll(() => harness.close());

  const oneTx = async (executionId: string): Promise<boolean> => {
    const { rows } = await sql<{ tx: string }>`
      SELECT xmin::text AS tx FROM events WHERE stream_id = ${`execution-${executionId}`}`.execute(harness.database.db);
    return new Set(rows.map((r) => r.tx)).size === 1;
  };

  const compare = async (process: ProcessRecord, body: unknown) => {
    const added = await harness.catalog.add(process);
    const answer = await harness.call(engineHttp.testProcess, { params: { processId: added.id }, body }, actor);
    expect(answer.status).toBe(200);
    const record = answer.body as ExecutionRecord;
    const get = await harness.call(engineHttp.getExecution, { params: { id: record.id } }, actor);
    return { record, get: get.body as ExecutionRecord, whole: await oneTx(record.id) };
  };

  test('weird values, labels named like prototype keys, skipped branch (labels are required by config validation)', async () => {
    const g = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('__proto__', 'scriptNode', { code: `return ${WEIRD};` })
      .node('constructor', 'scriptNode', { code: `return { c: input.In.n, arr: [undefined, -0, 1e21] };` })
      .node('NoLabel', 'scriptNode', { code: `return input;` })
      .node('C', 'conditionalNode', {
        mode: 'conditions',
        combinator: 'and',
        conditions: [{ left: '{{input["In"]["n"]}}', operator: 'gt', right: 100 }],
      })
      .node('Never', 'outputNode', { fields: { n: '{{input["In"]["n"]}}' } })
      .node('Out', 'outputNode')
      .edge('In', '__proto__')
      .edge('In', 'constructor')
      .edge('__proto__', 'NoLabel')
      .edge('constructor', 'NoLabel')
      .edge('NoLabel', 'C')
      .edge('C', 'Never', 'true')
      .edge('C', 'Out', 'false');
    const process = g.process({ organization_id: org });
    // Labels are required by node config validation ("must have required property 'label'"): not deleted.
    const body = JSON.parse(
      '{"n": -0, "big": 1e21, "__proto__": {"p": 1}, "z": 1, "a": [[], {}, [[null]]], "s": "\\u00e9\\ud83d\\ude00"}',
    );
    const { record, get, whole } = await compare(process, body);
    expect(whole).toBe(true);
    expect(record.status).toBe('completed');
    expect(get).toEqual(record);
    expect(sortedJson(get)).toBe(sortedJson(record));
    // Keys in jsonb's order on both paths (shorter first, then bytewise): the same text.
    expect(JSON.stringify(get)).toBe(JSON.stringify(record));
    expect(Object.keys(record.input_data as object)).toEqual(['a', 'n', 's', 'z', 'big', '__proto__']);
    expect(Object.keys(record.graph_snapshot)).toEqual(['edges', 'nodes']);
    // A parent labelled "__proto__" among two parents is a key of the merged input like any other.
    const noLabel = record.node_states.find((s) => s.node_name === 'NoLabel')!;
    expect(Object.keys(noLabel.input_data as object)).toEqual(['In', '__proto__', 'constructor']);
  });

  test('retries with max_retries, written whole', async () => {
    const process = new GraphBuilder()
      .node('In', 'inputNode', { triggerType: 'manual' })
      .node('Flaky', 'scriptNode', { code: 'if (Math.random() < 0.6) throw new Error("flaky"); return { ok: 1 };' })
      .node('Out', 'outputNode')
      .edge('In', 'Flaky')
      .edge('Flaky', 'Out')
      .process({ organization_id: org, max_retries: 5 });
    let retried = 0;
    for (let i = 0; i < 12; i++) {
      const added = await harness.catalog.add({ ...process, id: crypto.randomUUID() });
      const answer = await harness.call(engineHttp.testProcess, { params: { processId: added.id }, body: {} }, actor);
      const record = answer.body as ExecutionRecord;
      if (record.status !== 'completed') continue;
      const get = (await harness.call(engineHttp.getExecution, { params: { id: record.id } }, actor))
        .body as ExecutionRecord;
      if (record.attempt > 1 && (await oneTx(record.id))) retried++;
      expect(JSON.stringify(get)).toBe(JSON.stringify(record));
    }
    // Each run retries with probability 1 - 0.4 - 0.6^6: none of 12 retrying is below 1 in 10,000.
    expect(retried).toBeGreaterThan(0);
  });
});
