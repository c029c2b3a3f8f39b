import { randomBytes } from 'node:crypto';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export const SECRET_KEY_FILE = 'secret-key';

/** Embedded mode keeps its credentials master key in the data dir (mode 0600) when WEFT_SECRET_KEY is unset. */
export async function loadOrCreateSecretKey(dataDir: string): Promise<string> {
  const file = join(dataDir, SECRET_KEY_FILE);
  try {
    const existing = (await readFile(file, 'utf8')).trim();
    if (existing) return existing;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  await mkdir(dataDir, { recursive: true });
  const key = randomBytes(32).toString('base64url');
  await writeFile(file, `${key}\n`, { mode: 0o600, flag: 'wx' });
  await chmod(file, 0o600);
  return key;
}
