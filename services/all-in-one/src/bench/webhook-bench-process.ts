/** What the webhook benchmarks (webhook.bench.ts, embedded-store.bench.ts) send: the process and the API calls. */

/** input (webhook) -> conditional -> (script | script) -> output: the engine benchmark's process. */
export function fiveNodeGraph(returnToClient: boolean) {
  const node = (id: string, type: string, config: Record<string, unknown>) => ({ id, type, config });
  return {
    nodes: [
      node('in', 'inputNode', { label: 'In', triggerType: 'webhook' }),
      node('check', 'conditionalNode', {
        label: 'Big',
        mode: 'conditions',
        combinator: 'and',
        conditions: [{ left: '{{input["In"]["amount"]}}', operator: 'gt', right: 100 }],
      }),
      node('big', 'scriptNode', { label: 'Discount', code: 'return { total: input.In.amount * 0.9 };' }),
      node('small', 'scriptNode', { label: 'Fee', code: 'return { total: input.In.amount + 5 };' }),
      node('out', 'outputNode', {
        label: 'Result',
        returnToClient,
        fields: { big: '{{input["Discount"]["total"]}}', small: '{{input["Fee"]["total"]}}' },
      }),
    ],
    edges: [
      { source_node_id: 'in', target_node_id: 'check' },
      { source_node_id: 'check', target_node_id: 'big', source_handle: 'true' },
      { source_node_id: 'check', target_node_id: 'small', source_handle: 'false' },
      { source_node_id: 'big', target_node_id: 'out' },
      { source_node_id: 'small', target_node_id: 'out' },
    ],
  };
}

export type BenchCall = (
  method: string,
  path: string,
  body?: unknown,
) => Promise<{ status: number; body: { id?: string } | undefined }>;

/** JSON calls to Weft at `url` with the API key `key` (keep-alive fetch). */
export const benchClient =
  (url: string, key: string): BenchCall =>
  async (method, path, body) => {
    const response = await fetch(`${url}${path}`, {
      method,
      headers: { 'x-api-key': key, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: text ? (JSON.parse(text) as { id?: string }) : undefined };
  };

/** Creates and starts the five-node process in `organizationId`; answers its id. */
export async function startedBenchProcess(
  call: BenchCall,
  organizationId: string,
  returnToClient: boolean,
): Promise<string> {
  const created = await call('POST', `/api/v1/processes/by-org/${organizationId}`, {
    name: `bench-${returnToClient ? 'sync' : 'async'}`,
    ...fiveNodeGraph(returnToClient),
  });
  if (created.status !== 201) throw new Error(`create failed: ${JSON.stringify(created.body)}`);
  const started = await call('POST', `/api/v1/processes/start/${created.body?.id ?? ''}`);
  if (started.status !== 200) throw new Error(`start failed: ${JSON.stringify(started.body)}`);
  return String(created.body?.id);
}
