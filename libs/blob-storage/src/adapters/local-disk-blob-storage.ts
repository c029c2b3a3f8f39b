import { createHash, randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, open, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { blobKeyOf, blobUrlOf, defaultNameOf, assertValidBlobKey } from '../blob-key.js';
import {
  BlobData,
  BlobNotFoundError,
  BlobStorage,
  BlobTarget,
  FileReference,
  PutBlobOptions,
} from '../blob-storage.js';
import { countBytes, readAll } from '../byte-counting.js';

/** Written beside each blob; the data file alone is never taken for a stored blob. */
interface BlobMetadata {
  key: string;
  name: string;
  contentType: string;
  size: number;
}

/**
 * Blobs on the local disk under `<dataDir>/blobs` (embedded mode). Files are named by the SHA-256
 * of the key, so no key can reach outside that folder and keys `a` and `a/b` can coexist as on S3.
 * Layout: `blobs/<first 2 hex>/<hash>` (bytes) and `<hash>.json` (metadata, written last).
 */
export class LocalDiskBlobStorage implements BlobStorage {
  readonly root: string;

  constructor(dataDir: string) {
    this.root = join(dataDir, 'blobs');
  }

  async put(key: string, data: BlobData, contentType: string, options: PutBlobOptions = {}): Promise<FileReference> {
    assertValidBlobKey(key);
    const { dir, dataPath, metaPath } = this.pathsOf(key);
    await mkdir(dir, { recursive: true });
    // Write to temporary files and rename, so readers never see a half-written blob.
    const tmp = join(dir, `.${randomUUID()}.tmp`);
    try {
      let size: number;
      if (data instanceof Readable) {
        const counted = countBytes(data);
        await pipeline(counted.stream, createWriteStream(tmp, { flags: 'wx' }));
        size = counted.bytes();
      } else {
        await writeFile(tmp, data, { flag: 'wx' });
        size = data.byteLength;
      }
      const metadata: BlobMetadata = { key, name: options.name ?? defaultNameOf(key), contentType, size };
      await writeFile(`${tmp}.json`, JSON.stringify(metadata), { flag: 'wx' });
      await rename(tmp, dataPath);
      await rename(`${tmp}.json`, metaPath);
      return this.referenceOf(metadata);
    } finally {
      await rm(tmp, { force: true });
      await rm(`${tmp}.json`, { force: true });
    }
  }

  async get(target: BlobTarget): Promise<Readable> {
    const key = blobKeyOf(target);
    if (!(await this.readMetadata(key))) throw new BlobNotFoundError(key);
    try {
      // An open handle keeps reading the bytes even if the blob is deleted meanwhile.
      const handle = await open(this.pathsOf(key).dataPath, 'r');
      return handle.createReadStream();
    } catch (error) {
      if (isNotFound(error)) throw new BlobNotFoundError(key);
      throw error;
    }
  }

  async getBuffer(target: BlobTarget): Promise<Buffer> {
    return readAll(await this.get(target));
  }

  async stat(target: BlobTarget): Promise<FileReference | undefined> {
    const metadata = await this.readMetadata(blobKeyOf(target));
    return metadata && this.referenceOf(metadata);
  }

  async exists(target: BlobTarget): Promise<boolean> {
    return (await this.stat(target)) !== undefined;
  }

  async delete(target: BlobTarget): Promise<void> {
    const { metaPath, dataPath } = this.pathsOf(blobKeyOf(target));
    // Metadata first: from then on the blob counts as gone even if removing the bytes fails.
    await rm(metaPath, { force: true });
    await rm(dataPath, { force: true });
  }

  async close(): Promise<void> {}

  private pathsOf(key: string): { dir: string; dataPath: string; metaPath: string } {
    const hash = createHash('sha256').update(key).digest('hex');
    const dir = join(this.root, hash.slice(0, 2));
    return { dir, dataPath: join(dir, hash), metaPath: join(dir, `${hash}.json`) };
  }

  private async readMetadata(key: string): Promise<BlobMetadata | undefined> {
    try {
      const metadata = JSON.parse(await readFile(this.pathsOf(key).metaPath, 'utf8')) as BlobMetadata;
      // Guards against the (astronomically unlikely) hash collision.
      return metadata.key === key ? metadata : undefined;
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
  }

  private referenceOf(metadata: BlobMetadata): FileReference {
    return {
      name: metadata.name,
      url: blobUrlOf(metadata.key),
      size: metadata.size,
      contentType: metadata.contentType,
    };
  }
}

function isNotFound(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
}
