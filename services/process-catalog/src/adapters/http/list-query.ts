import { badRequest, type HttpCall } from '@weft/contracts';
import { isUuid } from '../../domain/shared/uuid.js';

/** The first value of a query parameter; an empty one counts as absent. */
export const singleQuery = (call: HttpCall, name: string): string | undefined => {
  const value = call.query[name];
  return (Array.isArray(value) ? value[0] : value) || undefined;
};

/** `search` and `collectionId` of a list; a collectionId that is no UUID is a 400, not an empty page. */
export function listFilter(call: HttpCall): { search?: string; collectionId?: string } {
  const search = singleQuery(call, 'search');
  const collectionId = singleQuery(call, 'collectionId');
  if (collectionId !== undefined && !isUuid(collectionId)) {
    throw badRequest('collectionId must be a UUID', [{ path: '/query/collectionId', message: 'must be a UUID' }]);
  }
  return { ...(search ? { search } : {}), ...(collectionId ? { collectionId } : {}) };
}

/** `tree=true` or `tree=false`; anything else is a 400 instead of silently answering the flat list. */
export function treeQuery(call: HttpCall): boolean {
  const tree = singleQuery(call, 'tree');
  if (tree === undefined || tree === 'false') return false;
  if (tree === 'true') return true;
  throw badRequest('tree must be true or false', [{ path: '/query/tree', message: 'must be true or false' }]);
}
