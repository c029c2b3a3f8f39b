import type { Condition, ConditionalNodeConfig, ConditionOperator } from '@weft/contracts';
import { linearRegExp } from './linear-regexp.js';
import { NodeFailure, type NodeExecutor } from './node-executor.js';

/** Conditions mode fires `true`/`false`; switch mode fires the first matching case label, else `default`. */
const isEmpty = (value: unknown): boolean =>
  value === undefined ||
  value === null ||
  value === '' ||
  (Array.isArray(value) && value.length === 0) ||
  (typeof value === 'object' && !Array.isArray(value) && Object.keys(value).length === 0);

const comparable = (value: unknown): number | string =>
  typeof value === 'number'
    ? value
    : typeof value === 'string' && value.trim() !== '' && !Number.isNaN(Number(value))
      ? Number(value)
      : (value as string | number | boolean).toString();

const looselyEqual = (left: unknown, right: unknown): boolean => {
  if (left === right) return true;
  if (typeof left === 'object' || typeof right === 'object') return JSON.stringify(left) === JSON.stringify(right);
  return comparable(left) === comparable(right);
};

const textOf = (value: unknown): string =>
  value === undefined || value === null
    ? ''
    : typeof value === 'object'
      ? JSON.stringify(value)
      : (value as string | number | boolean).toString();

const contains = (container: unknown, part: unknown): boolean => {
  if (Array.isArray(container)) return container.some((item) => looselyEqual(item, part));
  if (typeof container === 'string') return container.includes(String(part));
  if (container && typeof container === 'object') return Object.hasOwn(container, String(part));
  return false;
};

export function evaluateCondition({ left, operator, right }: Condition): boolean {
  const op: ConditionOperator = operator;
  switch (op) {
    case 'eq':
      return looselyEqual(left, right);
    case 'ne':
      return !looselyEqual(left, right);
    case 'gt':
      return comparable(left) > comparable(right);
    case 'gte':
      return comparable(left) >= comparable(right);
    case 'lt':
      return comparable(left) < comparable(right);
    case 'lte':
      return comparable(left) <= comparable(right);
    case 'contains':
      return contains(left, right);
    case 'notContains':
      return !contains(left, right);
    case 'startsWith':
      return typeof left === 'string' && left.startsWith(String(right));
    case 'endsWith':
      return typeof left === 'string' && left.endsWith(String(right));
    case 'in':
      return contains(right, left);
    case 'exists':
      return left !== undefined && left !== null;
    case 'notExists':
      return left === undefined || left === null;
    case 'isEmpty':
      return isEmpty(left);
    case 'isNotEmpty':
      return !isEmpty(left);
    case 'matches':
      return linearRegExp(textOf(right)).test(textOf(left));
    default: {
      const unknown: never = op;
      throw new NodeFailure(`unknown operator ${String(unknown)}`);
    }
  }
}

export function chooseBranch(config: ConditionalNodeConfig): string {
  switch (config.mode) {
    case 'conditions': {
      const results = config.conditions.map(evaluateCondition);
      const passed = config.combinator === 'or' ? results.some(Boolean) : results.every(Boolean);
      return passed ? 'true' : 'false';
    }
    case 'switch': {
      const match = config.cases.find((candidate) => looselyEqual(config.value, candidate.equals));
      return match ? match.label : 'default';
    }
    default: {
      const unknown: never = config;
      throw new NodeFailure(`unknown conditional mode ${JSON.stringify(unknown)}`);
    }
  }
}

export const conditionalNodeExecutor: NodeExecutor<ConditionalNodeConfig> = {
  type: 'conditionalNode',
  async execute(config) {
    const branch = chooseBranch(config);
    return { output: { branch }, handles: [branch] };
  },
};
