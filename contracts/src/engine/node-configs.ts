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

/** `kind` picks the integration: an HTTP request (default), an email over SMTP, or a signed webhook. */
export type IntegrationNodeConfig = HttpIntegrationConfig | EmailIntegrationConfig | WebhookIntegrationConfig;

export interface HttpIntegrationConfig extends CommonNodeConfig {
  kind?: 'http';
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

/** Sends one message through an `smtp` connection; attachments are file references. */
export interface EmailIntegrationConfig extends CommonNodeConfig {
  kind: 'email';
  connectionId: string;
  to: string | string[];
  cc?: string | string[];
  subject: string;
  text?: string;
  html?: string;
  attachments?: FileReference[];
  timeoutMs?: number;
}

/** POSTs `body` as JSON with `X-Weft-Signature: sha256=<hex HMAC-SHA256 of the exact bytes sent>`. */
export interface WebhookIntegrationConfig extends CommonNodeConfig {
  kind: 'webhook';
  url: string;
  body?: unknown;
  /** An `http` connection: its auth headers, and its `signingSecret` (preferred to an inline secret). */
  connectionId?: string;
  /** Inline signing secret, stored in the process definition as written: prefer a connection's. */
  secret?: string;
  timeoutMs?: number;
  retries?: number;
}

export interface OcrNodeConfig extends CommonNodeConfig {
  /** A file reference (usually a template to one). */
  file: FileReference;
  /** Tesseract language codes, each installed as `@tesseract.js-data/<code>`; default `["eng"]`. */
  languages?: string[];
  timeoutMs?: number;
}

export const WEB_AUTOMATION_ACTIONS = [
  'goto',
  'click',
  'fill',
  'select',
  'waitFor',
  'extractText',
  'extractAttribute',
  'screenshot',
  'pdf',
] as const;
export type WebAutomationAction = (typeof WEB_AUTOMATION_ACTIONS)[number];

export interface WebAutomationStep {
  action: WebAutomationAction;
  url?: string;
  selector?: string;
  value?: string;
  attribute?: string;
  /** Key in `extracted` (extract steps) or the file name (screenshot, pdf). */
  name?: string;
  timeoutMs?: number;
}

export interface WebAutomationNodeConfig extends CommonNodeConfig {
  steps: WebAutomationStep[];
  /** Host names the page may reach; empty = any the outbound guard allows. */
  allowedHosts?: string[];
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

/** Fills the selected data blocks of a process schema, each validated against the block's JSON schema. */
export type SchematizationNodeConfig = SchematizationMappingConfig | SchematizationLlmConfig;

interface SchematizationCommon extends CommonNodeConfig {
  schemaId: string;
  /** Data block names; each is an output handle carrying that block's data. */
  selectedDataBlocks: string[];
  timeoutMs?: number;
}

/** One JSONata expression per block, evaluated over the node's input; no model. */
export interface SchematizationMappingConfig extends SchematizationCommon {
  mode: 'mapping';
  mappings: Record<string, string>;
}

/** A chat model through an `llm` connection fills every block; validation errors are fed back up to `maxRepairs` times. */
export interface SchematizationLlmConfig extends SchematizationCommon {
  mode: 'llm';
  connectionId: string;
  source: unknown;
  instructions?: string;
  maxRepairs?: number;
  /** Overrides the connection's `model`. */
  model?: string;
}

export type MlModelNodeConfig = OpenAiModelConfig | OnnxModelConfig;

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/** An OpenAI-compatible API through an `llm` connection (`{baseUrl, apiKey, model?}`). */
export type OpenAiModelConfig = CommonNodeConfig & {
  provider: 'openai';
  connectionId: string;
  model?: string;
  timeoutMs?: number;
} & (
    | { operation: 'chat'; messages: ChatMessage[]; responseSchema?: Record<string, unknown> }
    | { operation: 'embeddings'; input: string | string[] }
  );

export const ONNX_TENSOR_TYPES = ['float32', 'float64', 'int32', 'int64', 'bool', 'string'] as const;
export type OnnxTensorType = (typeof ONNX_TENSOR_TYPES)[number];

/**
 * An ONNX model run on CPU: a file reference, a blob key of the organization, a base64 `data:` URL,
 * or an http(s) URL fetched once per engine (with the auth of the `http` connection `connectionId`).
 */
export interface OnnxModelConfig extends CommonNodeConfig {
  provider: 'onnx';
  model: FileReference | string;
  connectionId?: string;
  /** Input tensors by name: flat (or nested) `data`, its `dims`, its element `type` (default float32). */
  inputs: Record<string, { data: unknown; dims: number[]; type?: OnnxTensorType }>;
  timeoutMs?: number;
}
