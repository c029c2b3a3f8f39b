import { createHash } from 'node:crypto';
import { chmod, chown, lstat, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { EmbeddedPostgresError } from './embedded-postgres-error.js';
import type { PostgresOsUser } from './postgres-os-user.js';

/** Only the socket file's name depends on it: the server listens on no TCP port. */
export const SOCKET_PORT = 5432;
/** sun_path holds 108 bytes on Linux, the terminating NUL included (104 on macOS: stay below both). */
const SOCKET_PATH_MAX = 103;

const socketFile = (dir: string): string => join(dir, `.s.PGSQL.${SOCKET_PORT}`);

/** The socket lives in `<dataDir>/run`, or in a per-data-dir folder of the temp dir when that path is too long. */
export function socketDirectoryFor(dataDir: string, temp = tmpdir()): string {
  const preferred = join(resolve(dataDir), 'run');
  if (Buffer.byteLength(socketFile(preferred)) <= SOCKET_PATH_MAX) return preferred;
  const name = `weft-pg-${createHash('sha256').update(resolve(dataDir)).digest('hex').slice(0, 16)}`;
  const short = join(temp, name);
  return Buffer.byteLength(socketFile(short)) <= SOCKET_PATH_MAX ? short : join('/tmp', name);
}

/**
 * Creates the socket folder (mode 700, owned by the server's user) or checks an existing one: a
 * folder in the shared temp dir that someone else made (or a symlink) could hand our connections
 * to another server.
 */
export async function prepareSocketDirectory(dir: string, owner: PostgresOsUser | undefined): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const info = await lstat(dir);
  const expectedUid = owner?.uid ?? process.getuid?.();
  if (!info.isDirectory() || (expectedUid !== undefined && info.uid !== expectedUid && info.uid !== 0)) {
    throw new EmbeddedPostgresError(`the socket folder ${dir} is not a folder owned by this server's user; remove it`);
  }
  if (owner) await chown(dir, owner.uid, owner.gid);
  await chmod(dir, 0o700);
}
