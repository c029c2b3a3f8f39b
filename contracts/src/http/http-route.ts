import type { RequestSpec } from '../bus/message-spec.js';

/**
 * An HTTP endpoint of the public API. The gateway builds its routes from these declarations:
 * it authenticates, validates `body` against `bodySchema` (every violation listed, 400), checks
 * the organization in `orgParam` against the key, then sends an HttpCall on `spec.subject` to the
 * owning service and writes the HttpReply back. Services never see raw HTTP.
 */
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** A JSON Schema (draft 2020-12 subset that ajv compiles). */
export type JsonSchema = Record<string, unknown>;

export interface HttpCall<Body = unknown> {
  params: Record<string, string>;
  query: Record<string, string | string[] | undefined>;
  body: Body;
  /** Lower-case request headers the services may use (if-match, content-type). */
  headers: Record<string, string | undefined>;
}

export interface HttpReply<Body = unknown> {
  status: number;
  body?: Body;
  headers?: Record<string, string>;
}

export interface HttpRoute {
  method: HttpMethod;
  /** Fastify path syntax, e.g. `/api/v1/processes/by-id/:id`. */
  path: string;
  spec: RequestSpec<HttpCall, HttpReply>;
  summary: string;
  tag: string;
  bodySchema?: JsonSchema;
  /** Path parameter holding an organization id the key must belong to (unless system). */
  orgParam?: string;
  /** Only system API keys may call it. */
  systemOnly?: boolean;
  /** Path parameter holding a process id; keys restricted to process ids are checked against it. */
  processParam?: string;
  /** Creates processes (create, import, fork): keys restricted to process ids may not. */
  createsProcess?: boolean;
  /** Manages organization-wide resources (API keys, connections): keys restricted to process ids get 403. */
  unrestrictedOnly?: boolean;
  /**
   * Takes text/plain and multipart/form-data bodies as well as JSON: the gateway stores each uploaded
   * file in blob storage and sends `{fields, files: [FileReference]}` (other routes answer multipart with 415).
   */
  acceptsUploads?: boolean;
  /** Success status for OpenAPI (default 200). */
  successStatus?: number;
}

export const httpRoute = (route: HttpRoute): HttpRoute => route;
