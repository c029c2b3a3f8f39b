import { LocalDiskBlobStorage, S3BlobStorage, createBlobStorage } from '../src/index.js';

describe('createBlobStorage', () => {
  test('picks the local disk under <dataDir>/blobs when no S3 bucket is configured (embedded)', async () => {
    const storage = createBlobStorage({ dataDir: '/var/lib/weft', s3: undefined });

    expect(storage).toBeInstanceOf(LocalDiskBlobStorage);
    expect((storage as LocalDiskBlobStorage).root).toBe('/var/lib/weft/blobs');
    await storage.close();
  });

  test('picks S3 when a bucket is configured (distributed)', async () => {
    const storage = createBlobStorage({
      dataDir: '/var/lib/weft',
      s3: { endpoint: 'http://127.0.0.1:9000', region: 'us-east-1', bucket: 'weft' },
    });

    expect(storage).toBeInstanceOf(S3BlobStorage);
    await storage.close();
  });
});
