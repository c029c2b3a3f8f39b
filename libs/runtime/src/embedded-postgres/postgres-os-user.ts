import { execFile } from 'node:child_process';
import { chmod, chown, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { promisify } from 'node:util';
import { EmbeddedPostgresError } from './embedded-postgres-error.js';

const run = promisify(execFile);

/** The OS account PostgreSQL runs as: itself when not root (undefined), else `postgres`. */
export interface PostgresOsUser {
  name: string;
  uid: number;
  gid: number;
}

const POSTGRES_USER = 'postgres';

async function lookup(): Promise<PostgresOsUser | undefined> {
  try {
    const [uid, gid] = await Promise.all([run('id', ['-u', POSTGRES_USER]), run('id', ['-g', POSTGRES_USER])]);
    return { name: POSTGRES_USER, uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
  } catch {
    return undefined;
  }
}

/**
 * PostgreSQL refuses to run as root, so a root Weft runs it as the `postgres` OS user, creating
 * that user (a system account without a login shell) when it is missing, as embedded-postgres'
 * `createPostgresUser` does.
 */
export async function postgresOsUser(): Promise<PostgresOsUser | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  const existing = await lookup();
  if (existing) return existing;
  try {
    await run('useradd', [
      '--system',
      '--user-group',
      '--no-create-home',
      '--shell',
      '/usr/sbin/nologin',
      POSTGRES_USER,
    ]);
  } catch (error) {
    throw new EmbeddedPostgresError(
      `Weft runs as root and PostgreSQL may not, but creating the OS user "${POSTGRES_USER}" failed ` +
        `(${(error as Error).message.trim()}); create it, run Weft as another user, or set WEFT_DATABASE_URL`,
    );
  }
  const created = await lookup();
  if (!created) throw new EmbeddedPostgresError(`the OS user "${POSTGRES_USER}" was created but cannot be found`);
  return created;
}

/**
 * The first directory from `/` down to `path` that `user` may not enter (no x bit for it), or
 * undefined when every one is traversable. Checked up front: PostgreSQL's own error for a data dir
 * under /root (mode 700) names neither the directory nor the fix.
 */
export async function firstBlockedDirectory(path: string, user: PostgresOsUser): Promise<string | undefined> {
  const chain: string[] = [];
  for (let dir = resolve(path); ; dir = dirname(dir)) {
    chain.unshift(dir);
    if (dirname(dir) === dir) break;
  }
  for (const dir of chain) {
    const info = await stat(dir).catch(() => undefined);
    if (!info) return undefined; // not created yet: its parent was traversable, we create it for the user
    const bits = info.uid === user.uid ? info.mode >> 6 : info.gid === user.gid ? info.mode >> 3 : info.mode;
    if ((bits & 0o1) === 0) return dir;
  }
  return undefined;
}

export async function requireReachable(path: string, user: PostgresOsUser, what: string): Promise<void> {
  const blocked = await firstBlockedDirectory(path, user);
  if (!blocked) return;
  const mode = ((await stat(blocked)).mode & 0o777).toString(8);
  throw new EmbeddedPostgresError(
    `Weft runs as root, so its embedded PostgreSQL runs as the OS user "${user.name}", which cannot reach ${what} ` +
      `${path}: ${blocked} is mode ${mode}. Choose a WEFT_DATA_DIR outside it (e.g. /var/lib/weft), ` +
      `allow traversal (chmod o+x ${blocked}), run Weft as a non-root user, or set WEFT_DATABASE_URL.`,
  );
}

/**
 * A root-owned data dir with no group access (mkdtemp's 700) is opened to the postgres group for
 * traversal only (710): Weft owns that folder, and its other files keep their own modes.
 */
export async function letPostgresTraverse(dataDir: string, user: PostgresOsUser): Promise<void> {
  const info = await stat(dataDir);
  if ((await firstBlockedDirectory(dataDir, user)) !== resolve(dataDir)) return;
  if (info.uid !== 0 || (info.mode & 0o070) !== 0) return;
  await chown(dataDir, 0, user.gid);
  await chmod(dataDir, (info.mode & 0o7777) | 0o010);
}
