/** The embedded PostgreSQL cannot start here; the message says why and what to do. */
export class EmbeddedPostgresError extends Error {
  override name = 'EmbeddedPostgresError';
}
