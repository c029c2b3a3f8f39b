import { randomUUID } from 'node:crypto';
import { toKeySegment, type BlobStorage } from '@weft/blob-storage';
import type { FilePort } from '../application/trigger-ports.js';

/** Files listeners store (mail attachments) go to blob storage under a fresh folder each, keeping their name. */
export const blobFiles = (blobs: BlobStorage): FilePort => ({
  store: (prefix, content, contentType, name) =>
    blobs.put(`${prefix}/${randomUUID()}/${toKeySegment(name)}`, Buffer.from(content), contentType, { name }),
});
