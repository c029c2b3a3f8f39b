import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import S3rver from 's3rver';
import { BlobNotFoundError, S3BlobStorage, S3BlobStorageOptions } from '../src/index.js';
import { describeBlobStorageContract } from './blob-storage-contract.js';

/** A real S3 API (s3rver) on 127.0.0.1, a random port and a temporary directory; no mocks. */
describe('S3BlobStorage', () => {
  const bucket = 'weft-blob-test';
  let server: S3rver;
  let directory: string;
  let options: S3BlobStorageOptions;

  beforeAll(async () => {
    directory = await mkdtemp(join(tmpdir(), 'weft-s3rver-'));
    server = new S3rver({
      address: '127.0.0.1',
      port: 0,
      silent: true,
      directory,
      configureBuckets: [{ name: bucket }],
    });
    const { port } = await server.run();
    // s3rver checks signatures against these fixed credentials.
    options = {
      endpoint: `http://127.0.0.1:${port}`,
      region: 'us-east-1',
      bucket,
      accessKeyId: 'S3RVER',
      secretAccessKey: 'S3RVER',
    };
  });
  afterAll(async () => {
    await server.close();
    await rm(directory, { recursive: true, force: true });
  });

  describe('contract', () => {
    describeBlobStorageContract(async () => new S3BlobStorage(options));
  });

  test('a missing bucket is an error, not a missing blob', async () => {
    const storage = new S3BlobStorage({ ...options, bucket: 'no-such-bucket' });
    try {
      const failure = await storage.get('some/key').catch((error: unknown) => error);

      expect(failure).toBeInstanceOf(Error);
      expect(failure).not.toBeInstanceOf(BlobNotFoundError);
      expect((failure as Error).name).toBe('NoSuchBucket');
    } finally {
      await storage.close();
    }
  });

  // s3rver does not verify V4 signatures, but it does refuse unknown access keys.
  test('credentials from the options are sent: an unknown access key is refused', async () => {
    const storage = new S3BlobStorage({ ...options, accessKeyId: 'NOT-S3RVER' });
    try {
      await expect(storage.put('k', Buffer.from('x'), 'text/plain')).rejects.toMatchObject({
        name: 'InvalidAccessKeyId',
      });
    } finally {
      await storage.close();
    }
  });
});
