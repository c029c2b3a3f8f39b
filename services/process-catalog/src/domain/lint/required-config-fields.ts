import type { GraphNode } from '../process/graph.js';
import type { NodeType } from '../process/node-types.js';

/**
 * Config fields each node type cannot run without (lint check 4). The engine validates configs
 * fully when it runs; this table only catches what is obviously missing while editing.
 * Each entry lists alternatives: one of them must be populated.
 */
type Requirement = readonly string[];

const ALWAYS: readonly Requirement[] = [['label']];

function requirementsFor(type: NodeType, config: Record<string, unknown>): readonly Requirement[] {
  switch (type) {
    case 'inputNode':
      switch (config.triggerType) {
        case 'schedule':
          return [['triggerType'], ['cronExpression']];
        case 'gmail':
        case 'outlook':
          return config.authMethod === 'service_account'
            ? [['triggerType'], ['serviceAccountId'], ['impersonationEmail']]
            : [['triggerType']];
        default:
          return [['triggerType']];
      }
    case 'outputNode':
      return [];
    case 'scriptNode':
      return [['code']];
    case 'schematizationNode':
      return [['schemaId']];
    case 'sqlNode':
      return [['connectionId'], ['query']];
    case 'databaseNode':
      return [['connectionId'], ['table'], ['operation']];
    case 'mlModelNode':
      return [];
    case 'conditionalNode':
      return config.mode === 'switch' ? [['mode'], ['value'], ['cases']] : [['mode'], ['conditions']];
    case 'loopNode':
      return [['items']];
    case 'waitNode':
      return [['seconds', 'until']];
    case 'integrationNode':
      switch (config.kind) {
        case 'email':
          return [['connectionId'], ['to'], ['subject']];
        case 'webhook':
          return [['url'], ['connectionId', 'secret']];
        default:
          return [['method'], ['url']];
      }
    case 'webAutomationNode':
      return [['steps']];
    case 'ocrNode':
      return [['file']];
    default: {
      const unknownType: never = type;
      return unknownType;
    }
  }
}

const populated = (value: unknown): boolean => {
  if (value === undefined || value === null) return false;
  if (typeof value === 'string') return value.trim().length > 0;
  if (Array.isArray(value)) return value.length > 0;
  return true;
};

/** Requirements of a node that its config leaves empty, as `a` or `a or b`. */
export function missingConfigFields(node: GraphNode & { type: NodeType }): string[] {
  return [...ALWAYS, ...requirementsFor(node.type, node.config)]
    .filter((alternatives) => !alternatives.some((field) => populated(node.config[field])))
    .map((alternatives) => alternatives.join(' or '));
}
