import { DeleteObjectCommand, GetObjectCommand, HeadObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { Readable } from 'node:stream';
import { assertValidBlobKey, blobKeyOf, blobUrlOf, defaultNameOf } from '../blob-key.js';
import {
  BlobData,
  BlobNotFoundError,
  BlobStorage,
  BlobTarget,
  FileReference,
  PutBlobOptions,
} from '../blob-storage.js';
import { countBytes, readAll } from '../byte-counting.js';

export interface S3BlobStorageOptions {
  /** e.g. `http://minio:9000`; absent means AWS itself. */
  endpoint?: string;
  region: string;
  bucket: string;
  /** Both or neither; neither falls back to the AWS SDK's default credential chain. */
  accessKeyId?: string;
  secretAccessKey?: string;
}

// S3 metadata travels in HTTP headers, which must be ASCII.
const NAME_METADATA = 'weft-name';

/** Blobs in an S3-compatible bucket (distributed mode: MinIO, AWS S3, ...). */
export class S3BlobStorage implements BlobStorage {
  private readonly client: S3Client;
  private readonly bucket: string;

  constructor(options: S3BlobStorageOptions) {
    this.bucket = options.bucket;
    this.client = new S3Client({
      endpoint: options.endpoint,
      region: options.region,
      // Path-style URLs work with MinIO and s3rver without wildcard DNS for bucket names.
      forcePathStyle: true,
      credentials:
        options.accessKeyId && options.secretAccessKey
          ? { accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey }
          : undefined,
      // Default CRC32 trailers use aws-chunked bodies that many S3-compatible servers store verbatim.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  }

  async put(key: string, data: BlobData, contentType: string, options: PutBlobOptions = {}): Promise<FileReference> {
    assertValidBlobKey(key);
    const name = options.name ?? defaultNameOf(key);
    const counted = data instanceof Readable ? countBytes(data) : undefined;
    // Upload sends small bodies in one PUT and streams large ones as a multipart upload.
    const upload = new Upload({
      client: this.client,
      params: {
        Bucket: this.bucket,
        Key: key,
        Body: counted ? counted.stream : data,
        ContentType: contentType,
        Metadata: { [NAME_METADATA]: encodeURIComponent(name) },
      },
    });
    await upload.done();
    const size = counted ? counted.bytes() : (data as Buffer | Uint8Array).byteLength;
    return { name, url: blobUrlOf(key), size, contentType };
  }

  async get(target: BlobTarget): Promise<Readable> {
    const key = blobKeyOf(target);
    try {
      const response = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      if (!(response.Body instanceof Readable)) throw new Error(`S3 returned no readable body for ${key}`);
      return response.Body;
    } catch (error) {
      if (isMissingObject(error)) throw new BlobNotFoundError(key);
      throw error;
    }
  }

  async getBuffer(target: BlobTarget): Promise<Buffer> {
    return readAll(await this.get(target));
  }

  async stat(target: BlobTarget): Promise<FileReference | undefined> {
    const key = blobKeyOf(target);
    try {
      const head = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: key }));
      const storedName = head.Metadata?.[NAME_METADATA];
      return {
        name: storedName ? decodeURIComponent(storedName) : defaultNameOf(key),
        url: blobUrlOf(key),
        size: head.ContentLength ?? 0,
        contentType: head.ContentType ?? 'application/octet-stream',
      };
    } catch (error) {
      if (isMissingObject(error)) return undefined;
      throw error;
    }
  }

  async exists(target: BlobTarget): Promise<boolean> {
    return (await this.stat(target)) !== undefined;
  }

  async delete(target: BlobTarget): Promise<void> {
    await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: blobKeyOf(target) }));
  }

  async close(): Promise<void> {
    this.client.destroy();
  }
}

/**
 * A missing key, not a missing bucket: that one is a configuration error and must surface. (A HEAD
 * has no body to tell them apart, so `stat`/`exists` on a missing bucket answer "absent".)
 */
function isMissingObject(error: unknown): boolean {
  const name = (error as { name?: unknown } | undefined)?.name;
  return name === 'NoSuchKey' || name === 'NotFound';
}
