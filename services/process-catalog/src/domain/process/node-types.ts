import { DEFAULT_SOURCE_HANDLE, type GraphNode } from './graph.js';

/** Node type ids fixed in DESIGN.md ("Fixed decisions"). */
export const NODE_TYPES = [
  'inputNode',
  'outputNode',
  'scriptNode',
  'schematizationNode',
  'sqlNode',
  'databaseNode',
  'mlModelNode',
  'conditionalNode',
  'loopNode',
  'waitNode',
  'integrationNode',
  'webAutomationNode',
  'ocrNode',
] as const;

export type NodeType = (typeof NODE_TYPES)[number];

export const isKnownNodeType = (type: string): type is NodeType => (NODE_TYPES as readonly string[]).includes(type);

export const INPUT_TRIGGER_TYPES = ['gmail', 'outlook', 'webhook', 'schedule', 'manual'] as const;

/** The config field of a schematization node that lists the data block names it emits on. */
export const SCHEMATIZATION_BLOCKS_FIELD = 'selectedDataBlocks';

const strings = (value: unknown): string[] =>
  Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string' && item.length > 0) : [];

/** Output handles a node offers, from the spec's handle table. */
export function outputHandles(node: GraphNode): string[] {
  const config = node.config;
  switch (node.type) {
    case 'conditionalNode': {
      if (config.mode === 'switch') {
        const cases = Array.isArray(config.cases) ? (config.cases as unknown[]) : [];
        const labels = cases.map((entry) =>
          entry && typeof entry === 'object' ? (entry as { label?: unknown }).label : undefined,
        );
        return [...strings(labels), 'default'];
      }
      return ['true', 'false'];
    }
    case 'schematizationNode':
      return strings(config[SCHEMATIZATION_BLOCKS_FIELD]);
    case 'loopNode':
      return ['start', 'output'];
    case 'scriptNode': {
      const ports = strings(config.outputs);
      return ports.length > 0 ? ports : [DEFAULT_SOURCE_HANDLE];
    }
    default:
      return [DEFAULT_SOURCE_HANDLE];
  }
}
