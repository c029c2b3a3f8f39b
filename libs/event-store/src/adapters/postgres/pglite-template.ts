import { randomUUID } from 'node:crypto';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PGlite } from '@electric-sql/pglite';

/**
 * A throw-away in-memory PGlite (tests) starts from a dump of a freshly initialised cluster
 * instead of running initdb each time: initdb costs seconds of WASM work, loading the dump well
 * under one. The dump is made once per PGlite version and kept in the OS temp dir, so every test
 * file and process shares it; it is written whole and renamed, so a reader never sees half of it.
 */
// Named for the PGlite version in the pnpm catalog: a dump only loads into the version that made it.
const templatePath = (): string => join(tmpdir(), 'weft-pglite-template-0.5.16.tar');

let template: Promise<Blob> | undefined;

async function loadOrCreateTemplate(): Promise<Blob> {
  const path = templatePath();
  try {
    return new Blob([await readFile(path)]);
  } catch {
    const fresh = new PGlite();
    await fresh.waitReady;
    const dump = await fresh.dumpDataDir('none');
    await fresh.close();
    const partial = `${path}.${randomUUID()}`;
    await writeFile(partial, new Uint8Array(await dump.arrayBuffer()));
    await rename(partial, path);
    return dump;
  }
}

/** A new in-memory PGlite with an empty, initialised cluster. */
export async function freshInMemoryPglite(): Promise<PGlite> {
  template ??= loadOrCreateTemplate().catch((error: unknown) => {
    template = undefined;
    throw error;
  });
  try {
    const pglite = new PGlite({ loadDataDir: await template });
    await pglite.waitReady;
    return pglite;
  } catch {
    // An unreadable template (another PGlite version, a damaged file): initdb as before.
    const pglite = new PGlite();
    await pglite.waitReady;
    return pglite;
  }
}
