import type { Readable } from 'node:stream';

/**
 * The blob storage port: files that flow through executions (webhook uploads, mail attachments,
 * node outputs). The local disk backs it when embedded, S3-compatible storage when distributed.
 */

/** What executions carry around instead of file bytes; JSON-safe and storage-neutral. */
export interface FileReference {
  /** File name shown to users, e.g. the attachment's original name. */
  name: string;
  /** `weft-blob://<key>`: names the blob in whichever storage holds it. */
  url: string;
  /** Bytes. */
  size: number;
  contentType: string;
}

export type BlobData = Buffer | Uint8Array | Readable;

export interface PutBlobOptions {
  /** Defaults to the key's last segment. */
  name?: string;
}

/** A reference, its `weft-blob://` url, or a plain key. */
export type BlobTarget = FileReference | string;

export interface BlobStorage {
  /** Stores (or replaces) the blob under `key`. A failed put leaves no partial blob behind. */
  put(key: string, data: BlobData, contentType: string, options?: PutBlobOptions): Promise<FileReference>;
  /** The blob's bytes as a stream; throws BlobNotFoundError when absent. */
  get(target: BlobTarget): Promise<Readable>;
  /** The blob's bytes in memory; throws BlobNotFoundError when absent. */
  getBuffer(target: BlobTarget): Promise<Buffer>;
  /** The blob's reference, or undefined when absent. */
  stat(target: BlobTarget): Promise<FileReference | undefined>;
  exists(target: BlobTarget): Promise<boolean>;
  /** Idempotent: deleting an absent blob succeeds. */
  delete(target: BlobTarget): Promise<void>;
  /** Releases connections; the storage is unusable afterwards. */
  close(): Promise<void>;
}

export class BlobNotFoundError extends Error {
  override name = 'BlobNotFoundError';
  constructor(readonly key: string) {
    super(`blob ${key} does not exist`);
  }
}

export class InvalidBlobKeyError extends Error {
  override name = 'InvalidBlobKeyError';
  constructor(
    readonly key: string,
    reason: string,
  ) {
    super(`invalid blob key ${JSON.stringify(key)}: ${reason}`);
  }
}
