import { existsSync } from 'node:fs';
import Module from 'node:module';
import { dirname, join } from 'node:path';

/**
 * jest loads globalSetup and globalTeardown with Node's resolver, not with the moduleNameMapper the
 * tests get: map the TypeScript sources' relative './x.js' imports to './x.ts' the same way, so
 * the setup can use the harness the suites use. Workspace packages resolve to their built dist.
 */
type Resolve = (request: string, parent: { filename?: string } | undefined, ...rest: unknown[]) => string;
const loader = Module as unknown as { _resolveFilename: Resolve };
const resolve = loader._resolveFilename;
loader._resolveFilename = function (this: unknown, request, parent, ...rest) {
  if (request.startsWith('.') && request.endsWith('.js') && parent?.filename) {
    const source = `${request.slice(0, -'.js'.length)}.ts`;
    if (existsSync(join(dirname(parent.filename), source))) request = source;
  }
  return resolve.call(this, request, parent, ...rest);
};
