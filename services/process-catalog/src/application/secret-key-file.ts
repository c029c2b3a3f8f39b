import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * WEFT_SECRET_KEY when set; otherwise (embedded mode) a key generated once into the data dir,
 * readable by the owner only, so credentials stay decryptable across restarts.
 */
export async function resolveSecretKey(config: { secretKey?: string; dataDir: string }): Promise<string> {
  if (config.secretKey) return config.secretKey;
  const file = join(config.dataDir, 'secret-key');
  try {
    return (await readFile(file, 'utf8')).trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  await mkdir(config.dataDir, { recursive: true });
  const key = randomBytes(32).toString('base64url');
  // 'wx' fails if another process created it meanwhile; then that one's key wins.
  try {
    await writeFile(file, key, { mode: 0o600, flag: 'wx' });
    return key;
  } catch {
    return (await readFile(file, 'utf8')).trim();
  }
}
