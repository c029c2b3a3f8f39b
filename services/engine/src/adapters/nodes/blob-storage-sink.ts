import { randomUUID } from 'node:crypto';
import { toKeySegment, type BlobStorage } from '@weft/blob-storage';
import type { BlobSink } from './integration-node.js';

/**
 * Files that nodes produce go to the configured blob storage (local disk or S3) under the running
 * organization's prefix (`<org>/executions/<execution>/<node>/<uuid>/<name>`), like uploads and mail
 * attachments: only that organization's nodes read them and only its keys download them.
 */
export const blobStorageSink = (storage: BlobStorage): BlobSink => ({
  put: (owner, name, bytes, contentType) =>
    storage.put(
      [owner.organizationId, 'executions', owner.executionId, owner.nodeId, randomUUID(), name]
        .map(toKeySegment)
        .join('/'),
      Buffer.from(bytes),
      contentType,
      { name },
    ),
});
