import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { InvalidBlobKeyError, LocalDiskBlobStorage } from '../src/index.js';
import { describeBlobStorageContract } from './blob-storage-contract.js';

/** Real files in a fresh temporary data dir per file. */
describe('LocalDiskBlobStorage', () => {
  let dataDir: string;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'weft-blobs-'));
  });
  afterAll(async () => {
    await rm(dataDir, { recursive: true, force: true });
  });

  describe('contract', () => {
    describeBlobStorageContract(async () => new LocalDiskBlobStorage(dataDir));
  });

  test('keeps every file under <dataDir>/blobs, whatever the keys', async () => {
    const sandbox = await mkdtemp(join(tmpdir(), 'weft-blobs-sandbox-'));
    const storage = new LocalDiskBlobStorage(join(sandbox, 'data'));
    await expect(storage.put('org-1/../../../escaped', Buffer.from('x'), 'text/plain')).rejects.toBeInstanceOf(
      InvalidBlobKeyError,
    );
    await storage.put('..%2F..%2Fescaped', Buffer.from('x'), 'text/plain');
    await storage.put('org-1/files/a.txt', Buffer.from('y'), 'text/plain');

    expect(await readdir(sandbox)).toEqual(['data']);
    expect(await readdir(join(sandbox, 'data'))).toEqual(['blobs']);
    expect(storage.root).toBe(join(sandbox, 'data', 'blobs'));
    await rm(sandbox, { recursive: true, force: true });
  });

  test('a failed put leaves no temporary file behind', async () => {
    const sandbox = await mkdtemp(join(tmpdir(), 'weft-blobs-tmp-'));
    const storage = new LocalDiskBlobStorage(sandbox);
    const failing = (async function* () {
      yield Buffer.from('partial');
      throw new Error('boom');
    })();

    await expect(storage.put('k', Readable.from(failing), 'text/plain')).rejects.toThrow('boom');

    const dirs = await readdir(storage.root);
    const files = (await Promise.all(dirs.map((dir) => readdir(join(storage.root, dir))))).flat();
    expect(files).toEqual([]);
    await rm(sandbox, { recursive: true, force: true });
  });

  test('blobs survive a new instance on the same data dir', async () => {
    const first = new LocalDiskBlobStorage(dataDir);
    const ref = await first.put('persisted/file.txt', Buffer.from('still here'), 'text/plain', { name: 'File.txt' });

    const second = new LocalDiskBlobStorage(dataDir);

    expect(await second.stat(ref)).toEqual(ref);
    expect((await second.getBuffer(ref)).toString()).toBe('still here');
  });
});
