import { randomUUID } from 'node:crypto';
import type { ProcessEdge, ProcessNode, ProcessRecord } from '@weft/contracts';

/** The processes the engine benchmark runs. */
const node = (type: string, label: string, config: Record<string, unknown> = {}): ProcessNode => ({
  id: randomUUID(),
  type,
  position: { x: 0, y: 0 },
  config: { label, ...config },
});

const edge = (source: ProcessNode, target: ProcessNode, handle = 'output'): ProcessEdge => ({
  id: randomUUID(),
  source_node_id: source.id,
  target_node_id: target.id,
  source_handle: handle,
  target_handle: 'input',
});

const record = (
  organizationId: string,
  name: string,
  nodes: ProcessNode[],
  edges: ProcessEdge[],
  extra: Partial<ProcessRecord> = {},
): ProcessRecord => ({
  id: randomUUID(),
  organization_id: organizationId,
  name,
  description: 'benchmark',
  max_retries: 0,
  is_running: false,
  locked: false,
  error_webhook_url: null,
  timeout_seconds: 3600,
  nodes,
  edges,
  versions: [],
  created_by: 'bench',
  created_by_id: randomUUID(),
  created_at: new Date().toISOString(),
  updated_at: new Date().toISOString(),
  revision: 1,
  ...extra,
});

/** input -> conditional -> (script | script) -> output: the 5-node process of the issue. */
export function fiveNodeProcess(organizationId: string): ProcessRecord {
  const input = node('inputNode', 'In', { triggerType: 'webhook' });
  const check = node('conditionalNode', 'Big', {
    mode: 'conditions',
    combinator: 'and',
    conditions: [{ left: '{{input["In"]["amount"]}}', operator: 'gt', right: 100 }],
  });
  const big = node('scriptNode', 'Discount', { code: 'return { total: input.In.amount * 0.9 };' });
  const small = node('scriptNode', 'Fee', { code: 'return { total: input.In.amount + 5 };' });
  const out = node('outputNode', 'Result', {
    returnToClient: true,
    fields: { big: '{{input["Discount"]["total"]}}', small: '{{input["Fee"]["total"]}}' },
  });
  return record(
    organizationId,
    'five nodes',
    [input, check, big, small, out],
    [edge(input, check), edge(check, big, 'true'), edge(check, small, 'false'), edge(big, out), edge(small, out)],
  );
}

/** input -> n conditionals in a chain -> output. */
export function chainProcess(organizationId: string, length: number): ProcessRecord {
  const input = node('inputNode', 'In', { triggerType: 'manual' });
  const nodes = [input];
  const edges: ProcessEdge[] = [];
  let previous = input;
  for (let i = 0; i < length; i++) {
    const step = node('conditionalNode', `Step${i}`, {
      mode: 'conditions',
      conditions: [{ left: 1, operator: 'eq', right: 1 }],
    });
    edges.push(edge(previous, step, previous === input ? 'output' : 'true'));
    nodes.push(step);
    previous = step;
  }
  const out = node('outputNode', 'Out', { fields: { done: true } });
  edges.push(edge(previous, out, 'true'));
  nodes.push(out);
  return record(organizationId, `chain of ${length}`, nodes, edges);
}

/** input -> n conditionals side by side -> one output joining them. */
export function fanOutProcess(organizationId: string, width: number): ProcessRecord {
  const input = node('inputNode', 'In', { triggerType: 'manual' });
  const out = node('outputNode', 'Out', { fields: { done: true } });
  const nodes = [input, out];
  const edges: ProcessEdge[] = [];
  for (let i = 0; i < width; i++) {
    const branch = node('conditionalNode', `Branch${i}`, {
      mode: 'conditions',
      conditions: [{ left: 1, operator: 'eq', right: 1 }],
    });
    nodes.push(branch);
    edges.push(edge(input, branch), edge(branch, out, 'true'));
  }
  return record(organizationId, `fan-out of ${width}`, nodes, edges);
}

/** input -> wait an hour -> output: parks executions. */
export function parkedProcess(organizationId: string): ProcessRecord {
  const input = node('inputNode', 'In', { triggerType: 'manual' });
  const wait = node('waitNode', 'Park', { seconds: 3600 });
  const out = node('outputNode', 'Out');
  return record(organizationId, 'parked', [input, wait, out], [edge(input, wait), edge(wait, out)], {
    timeout_seconds: 7200,
  });
}
