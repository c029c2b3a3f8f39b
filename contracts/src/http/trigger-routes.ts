import { triggerHttp } from '../bus/trigger-subjects.js';
import { httpRoute, type HttpRoute } from './http-route.js';

const TAG = 'Triggers';

/** The body the gateway sends for a multipart/form-data webhook: form fields, and files already in blob storage. */
export interface UploadedForm {
  fields: Record<string, string | string[]>;
  files: { field: string; name: string; url: string; size: number; contentType: string }[];
}

/** Public HTTP routes served by the trigger service (docs/triggers.md). */
export const triggerRoutes: HttpRoute[] = [
  httpRoute({
    method: 'POST',
    path: '/api/v1/processes/:id/webhook',
    spec: triggerHttp.webhook,
    summary:
      "Fire a running process's webhook input node with the body (application/json, multipart/form-data, text/plain). Query: inputNodeId (with several webhook nodes), waitSeconds (sync limit, default 30). With a Return to Client output node: 200 with its output, or 202 {execution_id, status} past the limit; otherwise 202 at once. Header Idempotency-Key: a retry starts no second execution.",
    tag: TAG,
    processParam: 'id',
    acceptsUploads: true,
    successStatus: 202,
  }),
  httpRoute({
    method: 'GET',
    path: '/api/v1/processes/:id/listeners',
    spec: triggerHttp.listeners,
    summary:
      'The listeners of a process, one per input node: trigger type, state, last success, last error, next poll or tick.',
    tag: TAG,
    processParam: 'id',
  }),
];
