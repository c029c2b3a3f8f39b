import { parsePaging, type HttpCall } from '@weft/contracts';
import type { CatalogApplication } from '../../application/catalog-application.js';
import type { CollectionFields, CollectionKind } from '../../domain/collection/events.js';
import type { CatalogHttpHandler } from './catalog-http-handler.js';
import { treeQuery } from './list-query.js';

type CollectionRoute =
  | 'createProcessCollection'
  | 'listProcessCollections'
  | 'getProcessCollection'
  | 'updateProcessCollection'
  | 'deleteProcessCollection'
  | 'addProcessToCollection'
  | 'removeProcessFromCollection'
  | 'createSchemaCollection'
  | 'listSchemaCollections'
  | 'getSchemaCollection'
  | 'updateSchemaCollection'
  | 'deleteSchemaCollection'
  | 'addSchemaToCollection'
  | 'removeSchemaFromCollection';

export type CollectionHttpHandlers = Record<CollectionRoute, CatalogHttpHandler>;

const param = (call: HttpCall, name: string): string => call.params[name] ?? '';

function handlersFor(app: CatalogApplication, kind: CollectionKind, memberParam: string) {
  const collections = app.collections;
  const handlers: Record<'create' | 'list' | 'get' | 'update' | 'delete' | 'add' | 'remove', CatalogHttpHandler> = {
    async create(call, caller) {
      const body = (call.body ?? {}) as Partial<CollectionFields>;
      const record = await collections.create(kind, param(call, 'org_id'), { ...body, name: body.name ?? '' }, caller);
      return { status: 201, body: record };
    },
    async list(call, caller) {
      if (treeQuery(call)) {
        return { status: 200, body: { items: await collections.tree(kind, param(call, 'org_id'), caller) } };
      }
      return {
        status: 200,
        body: await collections.list(kind, param(call, 'org_id'), parsePaging(call.query), caller),
      };
    },
    async get(call, caller) {
      return { status: 200, body: await collections.view(kind, param(call, 'id'), caller) };
    },
    async update(call, caller) {
      const body = (call.body ?? {}) as Partial<CollectionFields>;
      return { status: 200, body: await collections.change(kind, param(call, 'id'), body, caller) };
    },
    async delete(call, caller) {
      await collections.delete(kind, param(call, 'id'), caller);
      return { status: 204 };
    },
    async add(call, caller) {
      return {
        status: 200,
        body: await collections.addMember(kind, param(call, 'id'), param(call, memberParam), caller),
      };
    },
    async remove(call, caller) {
      return {
        status: 200,
        body: await collections.removeMember(kind, param(call, 'id'), param(call, memberParam), caller),
      };
    },
  };
  return handlers;
}

/** Process collections and schema collections: separate sets, same rules. */
export function collectionHttpHandlers(app: CatalogApplication): CollectionHttpHandlers {
  const processes = handlersFor(app, 'process', 'pid');
  const schemas = handlersFor(app, 'schema', 'sid');
  return {
    createProcessCollection: processes.create,
    listProcessCollections: processes.list,
    getProcessCollection: processes.get,
    updateProcessCollection: processes.update,
    deleteProcessCollection: processes.delete,
    addProcessToCollection: processes.add,
    removeProcessFromCollection: processes.remove,
    createSchemaCollection: schemas.create,
    listSchemaCollections: schemas.list,
    getSchemaCollection: schemas.get,
    updateSchemaCollection: schemas.update,
    deleteSchemaCollection: schemas.delete,
    addSchemaToCollection: schemas.add,
    removeSchemaFromCollection: schemas.remove,
  };
}
