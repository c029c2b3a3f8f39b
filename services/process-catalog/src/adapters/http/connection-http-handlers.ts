import { parsePaging, type HttpCall } from '@weft/contracts';
import type { CatalogApplication } from '../../application/catalog-application.js';
import type { CatalogHttpHandler } from './catalog-http-handler.js';

export type ConnectionHttpHandlers = Record<
  | 'createConnection'
  | 'listConnections'
  | 'getConnection'
  | 'deleteConnection'
  | 'startOAuthConsent'
  | 'finishOAuthConsent',
  CatalogHttpHandler
>;

const param = (call: HttpCall, name: string): string => call.params[name] ?? '';

/** Connections: secrets go in once and are never answered back. */
export function connectionHttpHandlers(app: CatalogApplication): ConnectionHttpHandlers {
  return {
    async createConnection(call, caller) {
      const body = (call.body ?? {}) as { type: string; name: string; data: Record<string, unknown> };
      return { status: 201, body: await app.connections.create(param(call, 'org_id'), body, caller) };
    },
    async listConnections(call, caller) {
      return { status: 200, body: await app.connections.list(param(call, 'org_id'), parsePaging(call.query), caller) };
    },
    async getConnection(call, caller) {
      return { status: 200, body: await app.connections.get(param(call, 'id'), caller) };
    },
    async deleteConnection(call, caller) {
      await app.connections.delete(param(call, 'id'), caller);
      return { status: 204 };
    },
    async startOAuthConsent(call, caller) {
      return { status: 200, body: await app.oauthConsents.start(call, caller) };
    },
    async finishOAuthConsent(call, caller) {
      return { status: 200, body: await app.oauthConsents.finish(call, caller) };
    },
  };
}
