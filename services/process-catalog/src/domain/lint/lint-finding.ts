export type LintCheck =
  | 'input-node-exists'
  | 'output-node-exists'
  | 'no-orphan-nodes'
  | 'required-config-fields'
  | 'node-config'
  | 'schema-references'
  | 'edge-endpoints'
  | 'no-cycles'
  | 'template-references'
  | 'known-node-types'
  | 'trigger-config'
  | 'trigger-connection';

export interface LintFinding {
  check: LintCheck;
  severity: 'error' | 'warning';
  message: string;
  nodeId?: string;
  edgeId?: string;
}

export interface LintReport {
  /** True when no finding is an error. */
  valid: boolean;
  findings: LintFinding[];
}

/** What lint needs to know about a connection an input node names. */
export interface KnownConnection {
  id: string;
  type: string;
}

/** What lint needs to know about a schema to check references to it. */
export interface KnownSchema {
  id: string;
  dataBlocks: { id: string; name: string }[];
}
