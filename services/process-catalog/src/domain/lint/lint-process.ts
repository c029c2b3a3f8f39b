import { knownNodeTypes } from '@weft/contracts';
import { nodeLabel, type Graph, type GraphNode } from '../process/graph.js';
import { isKnownNodeType, SCHEMATIZATION_BLOCKS_FIELD } from '../process/node-types.js';
import { labelsReferencedInValue } from '../process/templates.js';
import type { KnownConnection, KnownSchema, LintFinding, LintReport } from './lint-finding.js';
import { nodeConfigViolations } from './node-config-violations.js';
import { connectionTypeFindings } from './connection-type-findings.js';
import { missingConfigFields } from './required-config-fields.js';
import { triggerFindings } from './trigger-findings.js';

/** Node types whose config schema the engine publishes in contracts (DESIGN.md "Node configs"). */
const engineValidatedTypes = new Set(knownNodeTypes());

const describe = (node: GraphNode): string => `node "${nodeLabel(node) ?? node.id}"`;

function parentsByNode(graph: Graph, nodeIds: ReadonlySet<string>): Map<string, string[]> {
  const parents = new Map<string, string[]>();
  for (const edge of graph.edges) {
    if (!nodeIds.has(edge.sourceNodeId) || !nodeIds.has(edge.targetNodeId)) continue;
    const list = parents.get(edge.targetNodeId) ?? [];
    list.push(edge.sourceNodeId);
    parents.set(edge.targetNodeId, list);
  }
  return parents;
}

function ancestorsOf(nodeId: string, parents: ReadonlyMap<string, string[]>): Set<string> {
  const seen = new Set<string>();
  const pending = [...(parents.get(nodeId) ?? [])];
  while (pending.length > 0) {
    const next = pending.pop() as string;
    if (seen.has(next)) continue;
    seen.add(next);
    pending.push(...(parents.get(next) ?? []));
  }
  return seen;
}

/** Nodes left after repeatedly removing nodes without incoming edges: exactly those on or behind a cycle. */
function nodesOnCycles(graph: Graph, nodeIds: ReadonlySet<string>): string[] {
  const incoming = new Map<string, number>([...nodeIds].map((id) => [id, 0]));
  const children = new Map<string, string[]>();
  for (const edge of graph.edges) {
    if (!nodeIds.has(edge.sourceNodeId) || !nodeIds.has(edge.targetNodeId)) continue;
    incoming.set(edge.targetNodeId, (incoming.get(edge.targetNodeId) ?? 0) + 1);
    children.set(edge.sourceNodeId, [...(children.get(edge.sourceNodeId) ?? []), edge.targetNodeId]);
  }
  const ready = [...incoming].filter(([, count]) => count === 0).map(([id]) => id);
  while (ready.length > 0) {
    const id = ready.pop() as string;
    incoming.delete(id);
    for (const child of children.get(id) ?? []) {
      const left = (incoming.get(child) ?? 0) - 1;
      incoming.set(child, left);
      if (left === 0) ready.push(child);
    }
  }
  return [...incoming.keys()];
}

function schemaFindings(node: GraphNode, schemas: ReadonlyMap<string, KnownSchema>): LintFinding[] {
  const { schemaId, dataBlockId } = node.config;
  const finding = (message: string): LintFinding => ({
    check: 'schema-references',
    severity: 'error',
    message: `${describe(node)}: ${message}`,
    nodeId: node.id,
  });
  if (schemaId === undefined || schemaId === null || schemaId === '') {
    return dataBlockId ? [finding('dataBlockId is set without schemaId')] : [];
  }
  const schema = typeof schemaId === 'string' ? schemas.get(schemaId) : undefined;
  if (!schema) return [finding(`schema ${JSON.stringify(schemaId)} does not exist`)];
  const findings: LintFinding[] = [];
  if (dataBlockId !== undefined && dataBlockId !== null && dataBlockId !== '') {
    if (!schema.dataBlocks.some((block) => block.id === dataBlockId)) {
      findings.push(finding(`data block ${JSON.stringify(dataBlockId)} is not in schema ${schema.id}`));
    }
  }
  if (node.type === 'schematizationNode') {
    const selected = node.config[SCHEMATIZATION_BLOCKS_FIELD];
    for (const name of Array.isArray(selected) ? selected : []) {
      if (!schema.dataBlocks.some((block) => block.name === name)) {
        findings.push(finding(`data block "${String(name)}" is not in schema ${schema.id}`));
      }
      const mappings = node.config.mappings;
      if (
        node.config.mode === 'mapping' &&
        mappings !== null &&
        typeof mappings === 'object' &&
        !(String(name) in mappings)
      ) {
        findings.push(finding(`data block "${String(name)}" has no mapping`));
      }
    }
  }
  return findings;
}

/**
 * The spec's seven lint checks, plus template references (to unknown labels or to nodes that are
 * not ancestors) and unknown node types. Pure: schemas are passed in.
 */
export function lintProcess(
  graph: Graph,
  schemas: ReadonlyMap<string, KnownSchema>,
  connections?: ReadonlyMap<string, KnownConnection>,
): LintReport {
  const findings: LintFinding[] = [];
  const nodeIds = new Set(graph.nodes.map((node) => node.id));

  if (!graph.nodes.some((node) => node.type === 'inputNode')) {
    findings.push({ check: 'input-node-exists', severity: 'error', message: 'the process has no input node' });
  }
  if (!graph.nodes.some((node) => node.type === 'outputNode')) {
    findings.push({ check: 'output-node-exists', severity: 'error', message: 'the process has no output node' });
  }

  const connected = new Set<string>();
  for (const edge of graph.edges) {
    const sourceKnown = nodeIds.has(edge.sourceNodeId);
    const targetKnown = nodeIds.has(edge.targetNodeId);
    if (!sourceKnown || !targetKnown) {
      findings.push({
        check: 'edge-endpoints',
        severity: 'error',
        message: `edge ${edge.id} points at a missing ${sourceKnown ? 'target' : 'source'} node`,
        edgeId: edge.id,
      });
      continue;
    }
    connected.add(edge.sourceNodeId);
    connected.add(edge.targetNodeId);
  }
  if (graph.nodes.length > 1) {
    for (const node of graph.nodes) {
      if (!connected.has(node.id)) {
        findings.push({
          check: 'no-orphan-nodes',
          severity: 'error',
          message: `${describe(node)} is not connected to any other node`,
          nodeId: node.id,
        });
      }
    }
  }

  for (const node of graph.nodes) {
    if (!isKnownNodeType(node.type)) {
      findings.push({
        check: 'known-node-types',
        severity: 'error',
        message: `${describe(node)} has unknown type "${node.type}"`,
        nodeId: node.id,
      });
      continue;
    }
    const missing = missingConfigFields({ ...node, type: node.type });
    if (missing.length > 0) {
      findings.push({
        check: 'required-config-fields',
        severity: 'error',
        message: `${describe(node)} (${node.type}) is missing ${missing.join(', ')}`,
        nodeId: node.id,
      });
    } else if (engineValidatedTypes.has(node.type)) {
      // The engine refuses a config its schema rejects, so lint reports it before a run does.
      for (const violation of nodeConfigViolations(node.type, node.config)) {
        findings.push({
          check: 'node-config',
          severity: 'error',
          message: `${describe(node)} (${node.type}): ${violation.path} ${violation.message}`,
          nodeId: node.id,
        });
      }
    }
    findings.push(...schemaFindings(node, schemas));
    findings.push(...triggerFindings(node, connections));
    findings.push(...connectionTypeFindings(node, connections));
  }

  const cycle = nodesOnCycles(graph, nodeIds);
  if (cycle.length > 0) {
    const byId = new Map(graph.nodes.map((node) => [node.id, node]));
    const names = cycle.map((id) => {
      const node = byId.get(id);
      return node ? describe(node).replace(/^node /, '') : id;
    });
    findings.push({
      check: 'no-cycles',
      severity: 'error',
      message: `the graph has a cycle through or behind nodes ${names.join(', ')}`,
      nodeId: cycle[0],
    });
  }

  const parents = parentsByNode(graph, nodeIds);
  const idByLabel = new Map(
    graph.nodes.flatMap((node) => {
      const label = nodeLabel(node);
      return label === undefined ? [] : [[label, node.id] as const];
    }),
  );
  for (const node of graph.nodes) {
    const referenced = [...new Set(labelsReferencedInValue(node.config))];
    if (referenced.length === 0) continue;
    const ancestors = ancestorsOf(node.id, parents);
    for (const label of referenced) {
      const targetId = idByLabel.get(label);
      if (targetId === undefined) {
        findings.push({
          check: 'template-references',
          severity: 'error',
          message: `${describe(node)} references unknown label "${label}"`,
          nodeId: node.id,
        });
      } else if (!ancestors.has(targetId)) {
        findings.push({
          check: 'template-references',
          severity: 'error',
          message: `${describe(node)} references "${label}", which does not run before it`,
          nodeId: node.id,
        });
      }
    }
  }

  return { valid: !findings.some((finding) => finding.severity === 'error'), findings };
}
