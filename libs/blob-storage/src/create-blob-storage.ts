import type { WeftConfig } from '@weft/config';
import type { BlobStorage } from './blob-storage.js';
import { LocalDiskBlobStorage } from './adapters/local-disk-blob-storage.js';
import { S3BlobStorage } from './adapters/s3-blob-storage.js';

/** S3 when WEFT_S3_BUCKET is set (distributed), else the local disk under the data dir (embedded). */
export function createBlobStorage(config: Pick<WeftConfig, 'dataDir' | 's3'>): BlobStorage {
  return config.s3 ? new S3BlobStorage(config.s3) : new LocalDiskBlobStorage(config.dataDir);
}
