/** Nest injection tokens of the catalog module. */
export const CATALOG_APPLICATION = Symbol('CATALOG_APPLICATION');
export const CATALOG_HTTP_HANDLERS = Symbol('CATALOG_HTTP_HANDLERS');
