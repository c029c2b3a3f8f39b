import { parsePaging, type HttpCall } from '@weft/contracts';
import type { CatalogApplication } from '../../application/catalog-application.js';
import type { DataBlockInput } from '../../application/schemas.js';
import type { CatalogHttpHandler } from './catalog-http-handler.js';
import { listFilter } from './list-query.js';

export type SchemaHttpHandlers = Record<
  'createSchema' | 'listSchemas' | 'getSchema' | 'updateSchema' | 'deleteSchema',
  CatalogHttpHandler
>;

interface SchemaBody {
  name?: string;
  description?: string;
  dataBlocks?: DataBlockInput[];
}

const param = (call: HttpCall, name: string): string => call.params[name] ?? '';

/** Schemas and their data blocks. */
export function schemaHttpHandlers(app: CatalogApplication): SchemaHttpHandlers {
  return {
    async createSchema(call, caller) {
      const body = (call.body ?? {}) as SchemaBody;
      const record = await app.schemas.create(param(call, 'org_id'), { ...body, name: body.name ?? '' }, caller);
      return { status: 201, body: record };
    },
    async listSchemas(call, caller) {
      const page = await app.schemas.list(param(call, 'org_id'), listFilter(call), parsePaging(call.query), caller);
      return { status: 200, body: page };
    },
    async getSchema(call, caller) {
      return { status: 200, body: await app.schemas.get(param(call, 'id'), caller) };
    },
    async updateSchema(call, caller) {
      return {
        status: 200,
        body: await app.schemas.change(param(call, 'id'), call.body ?? {}, caller),
      };
    },
    async deleteSchema(call, caller) {
      await app.schemas.delete(param(call, 'id'), caller);
      return { status: 204 };
    },
  };
}
