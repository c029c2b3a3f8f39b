/**
 * Node configs: the public contract of DESIGN.md "Node configs". Any string may hold
 * `{{input["<label>"]["<field>"]}}` templates, resolved by the engine before the node runs
 * (except script `code` and SQL `query`, which are never templated).
 */
export interface CommonNodeConfig {
  label: string;
  passthroughFiles?: boolean;
}

export interface InputNodeConfig extends CommonNodeConfig {
  triggerType: 'gmail' | 'outlook' | 'webhook' | 'schedule' | 'manual';
  [triggerField: string]: unknown;
}

export interface OutputNodeConfig extends CommonNodeConfig {
  returnToClient?: boolean;
  fields?: Record<string, unknown>;
}

export interface ScriptNodeConfig extends CommonNodeConfig {
  code: string;
  outputs?: string[];
  timeoutMs?: number;
  memoryMb?: number;
}

export const CONDITION_OPERATORS = [
  'eq',
  'ne',
  'gt',
  'gte',
  'lt',
  'lte',
  'contains',
  'notContains',
  'startsWith',
  'endsWith',
  'in',
  'exists',
  'notExists',
  'isEmpty',
  'isNotEmpty',
  'matches',
] as const;
export type ConditionOperator = (typeof CONDITION_OPERATORS)[number];

export interface Condition {
  left: unknown;
  operator: ConditionOperator;
  right?: unknown;
}

export interface ConditionsModeConfig extends CommonNodeConfig {
  mode: 'conditions';
  combinator?: 'and' | 'or';
  conditions: Condition[];
}

export interface SwitchModeConfig extends CommonNodeConfig {
  mode: 'switch';
  value: unknown;
  cases: { label: string; equals: unknown }[];
}

export type ConditionalNodeConfig = ConditionsModeConfig | SwitchModeConfig;

export interface LoopNodeConfig extends CommonNodeConfig {
  items: unknown;
  concurrency?: number;
}

export interface WaitNodeConfig extends CommonNodeConfig {
  seconds?: number | string;
  until?: string;
}

export interface IntegrationNodeConfig extends CommonNodeConfig {
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE' | 'HEAD';
  url: string;
  headers?: Record<string, unknown>;
  query?: Record<string, unknown>;
  body?: unknown;
  bodyType?: 'json' | 'form' | 'text';
  connectionId?: string;
  timeoutMs?: number;
  retries?: number;
}

export interface SqlNodeConfig extends CommonNodeConfig {
  connectionId: string;
  query: string;
  params?: unknown[];
}

export const DATABASE_OPERATIONS = ['select', 'insert', 'update', 'delete', 'upsert'] as const;
export type DatabaseOperation = (typeof DATABASE_OPERATIONS)[number];

export interface DatabaseNodeConfig extends CommonNodeConfig {
  connectionId: string;
  table: string;
  operation: DatabaseOperation;
  values?: Record<string, unknown>;
  where?: Record<string, unknown>;
  conflictColumns?: string[];
  limit?: number;
}

/** A file travelling between nodes: a reference into blob storage, never the bytes. */
export interface FileReference {
  name: string;
  url: string;
  size: number;
  contentType?: string;
}
