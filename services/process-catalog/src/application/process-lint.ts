import type { LintReport } from '../domain/lint/lint-finding.js';
import { lintProcess } from '../domain/lint/lint-process.js';
import type { Caller } from './caller.js';
import type { Connections } from './connections.js';
import type { KnownSchemaSource } from './known-schemas.js';
import type { ProcessQueries } from './process-queries.js';

/** Lints the current graph of a process against the organization's schemas. */
export async function lintStoredProcess(
  processId: string,
  caller: Caller,
  queries: ProcessQueries,
  schemas: KnownSchemaSource,
  connections: Pick<Connections, 'typesOf'>,
): Promise<LintReport> {
  const { state } = await queries.accessibleState(processId, caller);
  const known = await schemas.schemasOf(state.organizationId);
  const knownConnections = await connections.typesOf(state.organizationId);
  return lintProcess(
    state,
    new Map(known.map((schema) => [schema.id, schema])),
    new Map(knownConnections.map((connection) => [connection.id, connection])),
  );
}
