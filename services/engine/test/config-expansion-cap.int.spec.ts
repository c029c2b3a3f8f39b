import { engineHttp, type ExecutionRecord } from '@weft/contracts';
import { GraphBuilder } from './fixtures/graph-builder.js';
import { actorOf, startEngineHarness, type EngineHarness, type EngineMode } from './support/engine-harness.js';

/**
 * 2,000 references to a 1 MB value in one config string expand to 2 GB: uncapped, the engine
 * died of a fatal out-of-memory error, and so did every replica that resumed the execution.
 * With WEFT_NODE_CONFIG_MAX_BYTES (16 MiB by default) the node fails and the engine carries on.
 * (200 KB here, 400 MB expanded: the record, which shows the value, must fit a NATS reply.)
 */
const modes: EngineMode[] = ['embedded', 'distributed'];

describe.each(modes)("a node's config expanding past WEFT_NODE_CONFIG_MAX_BYTES (%s)", (mode) => {
  let harness: EngineHarness;
  const org = crypto.randomUUID();
  const actor = actorOf(org);

  beforeAll(async () => {
    harness = await startEngineHarness(mode);
  });
  afterAll(() => harness.close());

  const run = async (processId: string): Promise<ExecutionRecord> =>
    (
      await harness.call(
        engineHttp.testProcess,
        { params: { processId }, query: { waitSeconds: '120' }, body: {} },
        actor,
      )
    ).body as ExecutionRecord;

  test('fails the node with the limit named, and the engine runs the next execution', async () => {
    const bomb = await harness.catalog.add(
      new GraphBuilder()
        .node('In', 'inputNode', { triggerType: 'manual' })
        .node('Gen', 'scriptNode', { code: 'return { big: "x".repeat(200 * 1024) };' })
        .node('Out', 'outputNode', { fields: { body: 'a{{input["Gen"]["big"]}}'.repeat(2000) } })
        .edge('In', 'Gen')
        .edge('Gen', 'Out')
        .process({ organization_id: org }),
    );
    const record = await run(bomb.id);
    expect(record.status).toBe('failed');
    expect(record.error_message).toMatch(/^Out: the node's config expands to more than 16777216 bytes/);
    expect(record.node_states.find((state) => state.node_name === 'Out')?.status).toBe('failed');

    const fine = await harness.catalog.add(
      new GraphBuilder()
        .node('In', 'inputNode', { triggerType: 'manual' })
        .node('Out', 'outputNode', { fields: { ok: true } })
        .edge('In', 'Out')
        .process({ organization_id: org }),
    );
    expect(await run(fine.id)).toMatchObject({ status: 'completed', output_data: { Out: { ok: true } } });
  });
});
