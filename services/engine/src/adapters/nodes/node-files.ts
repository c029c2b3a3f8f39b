import { BLOB_URL_SCHEME, blobKeyOf, FILES_URL_PATH, type BlobStorage } from '@weft/blob-storage';
import type { FileReference } from '@weft/contracts';
import { NodeFailure } from '../../domain/nodes/node-executor.js';

/**
 * Reads the file a node's config references: a blob of the running organization (`weft-blob://`
 * or `/api/v1/files/` url: its uploads, mail attachments and node outputs all live under
 * `<org id>/`), or an inline `data:` url. Files of another organization are refused as "not found";
 * reads stop at a byte cap.
 */
export interface NodeFile {
  name: string;
  contentType: string;
  bytes: Buffer;
}

export interface NodeFileSource {
  read(reference: unknown, organizationId: string): Promise<NodeFile>;
}

const DEFAULT_MAX_BYTES = 50 * 1024 * 1024;

const isReference = (value: unknown): value is FileReference =>
  typeof value === 'object' && value !== null && typeof (value as FileReference).url === 'string';

function fromDataUrl(reference: FileReference, maxBytes: number): NodeFile {
  const match = /^data:([^;,]*)(;base64)?,(.*)$/s.exec(reference.url);
  if (!match) throw new NodeFailure(`file "${reference.name}" has a malformed data: url`);
  const bytes = match[2] ? Buffer.from(match[3]!, 'base64') : Buffer.from(decodeURIComponent(match[3]!));
  if (bytes.byteLength > maxBytes) throw new NodeFailure(`file "${reference.name}" is larger than ${maxBytes} bytes`);
  return { name: reference.name, contentType: match[1] || reference.contentType || 'application/octet-stream', bytes };
}

/** `storage` is optional so that pure tests can pass data: urls only. */
export function nodeFileSource(storage: BlobStorage | undefined, maxBytes = DEFAULT_MAX_BYTES): NodeFileSource {
  return {
    async read(reference, organizationId) {
      if (!isReference(reference)) throw new NodeFailure('file is not a file reference ({name, url, size})');
      if (reference.url.startsWith('data:')) return fromDataUrl(reference, maxBytes);
      if (!reference.url.startsWith(BLOB_URL_SCHEME) && !reference.url.startsWith(FILES_URL_PATH)) {
        throw new NodeFailure(`file "${reference.name}" is not in blob storage (url must be weft-blob://...)`);
      }
      let key: string;
      try {
        key = blobKeyOf(reference.url);
      } catch (error) {
        throw new NodeFailure(`file "${reference.name}": ${(error as Error).message}`);
      }
      // Every file of a tenant lives under its prefix; a key of another tenant is never read.
      if (!key.startsWith(`${organizationId}/`)) {
        throw new NodeFailure(`file "${reference.name}" not found`);
      }
      if (!storage) throw new NodeFailure('no blob storage is configured for node files');
      const stat = await storage.stat(key);
      if (!stat) throw new NodeFailure(`file "${reference.name}" not found`);
      if (stat.size > maxBytes) throw new NodeFailure(`file "${reference.name}" is larger than ${maxBytes} bytes`);
      return { name: reference.name, contentType: stat.contentType, bytes: await storage.getBuffer(key) };
    },
  };
}
