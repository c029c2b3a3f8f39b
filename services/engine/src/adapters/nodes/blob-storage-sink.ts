import { randomUUID } from 'node:crypto';
import { toKeySegment, type BlobStorage } from '@weft/blob-storage';
import type { BlobSink } from './integration-node.js';

/** Files that nodes produce go to the configured blob storage (local disk or S3) under a fresh key. */
export const blobStorageSink = (storage: BlobStorage): BlobSink => ({
  put: (name, bytes, contentType) =>
    storage.put(`node-files/${randomUUID()}/${toKeySegment(name)}`, Buffer.from(bytes), contentType, { name }),
});
