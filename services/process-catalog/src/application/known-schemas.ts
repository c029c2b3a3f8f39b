import type { KnownSchema } from '../domain/lint/lint-finding.js';

/** Where lint and start look up the schemas a process references. */
export interface KnownSchemaSource {
  schemasOf(organizationId: string): Promise<KnownSchema[]>;
}
