import { randomBytes, randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { BlobNotFoundError, BlobStorage, InvalidBlobKeyError, blobUrlOf } from '../src/index.js';

/**
 * The behaviour every BlobStorage adapter must show. Each spec file calls this inside its own
 * `describe` with a factory for its adapter; keys get a fresh prefix so runs never collide.
 */
export function describeBlobStorageContract(openStorage: () => Promise<BlobStorage>): void {
  let storage: BlobStorage;
  let prefix: string;

  beforeAll(async () => {
    storage = await openStorage();
  });
  afterAll(async () => {
    await storage.close();
  });
  beforeEach(() => {
    prefix = `contract-${randomUUID()}`;
  });

  const chunked = (data: Buffer, chunkSize: number): Readable =>
    Readable.from(
      (function* () {
        for (let offset = 0; offset < data.length; offset += chunkSize) yield data.subarray(offset, offset + chunkSize);
      })(),
    );

  test('put returns a reference, and the bytes come back by reference, url and key', async () => {
    const key = `${prefix}/invoice.pdf`;
    const data = Buffer.from('%PDF-1.7 not really a pdf');

    const ref = await storage.put(key, data, 'application/pdf');

    expect(ref).toEqual({
      name: 'invoice.pdf',
      url: `weft-blob://${key}`,
      size: data.length,
      contentType: 'application/pdf',
    });
    expect(await storage.getBuffer(ref)).toEqual(data);
    expect(await storage.getBuffer(ref.url)).toEqual(data);
    expect(await storage.getBuffer(key)).toEqual(data);
    expect(await storage.stat(key)).toEqual(ref);
    expect(await storage.exists(ref)).toBe(true);
  });

  test('get returns a stream of the stored bytes', async () => {
    const data = randomBytes(64 * 1024);
    const ref = await storage.put(`${prefix}/random.bin`, data, 'application/octet-stream');

    const stream = await storage.get(ref);
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);

    expect(stream).toBeInstanceOf(Readable);
    expect(Buffer.concat(chunks)).toEqual(data);
  });

  test('a stream body is stored whole and its size counted, also beyond one 5 MiB upload part', async () => {
    const data = randomBytes(6 * 1024 * 1024 + 123);

    const ref = await storage.put(`${prefix}/big.bin`, chunked(data, 256 * 1024), 'application/octet-stream');

    expect(ref.size).toBe(data.length);
    expect((await storage.stat(ref))?.size).toBe(data.length);
    expect((await storage.getBuffer(ref)).equals(data)).toBe(true);
  });

  test('an empty body is a valid blob', async () => {
    const ref = await storage.put(`${prefix}/empty.txt`, Buffer.alloc(0), 'text/plain');

    expect(ref.size).toBe(0);
    expect(await storage.exists(ref)).toBe(true);
    expect(await storage.getBuffer(ref)).toEqual(Buffer.alloc(0));
  });

  test('a Uint8Array body is accepted', async () => {
    const ref = await storage.put(`${prefix}/bytes`, new Uint8Array([1, 2, 3]), 'application/octet-stream');

    expect(await storage.getBuffer(ref)).toEqual(Buffer.from([1, 2, 3]));
  });

  test('a second put under the same key replaces bytes, size and content type', async () => {
    const key = `${prefix}/report`;
    await storage.put(key, Buffer.from('first version, longer'), 'text/plain');

    const ref = await storage.put(key, Buffer.from('{"v":2}'), 'application/json');

    expect(await storage.stat(key)).toEqual(ref);
    expect(ref).toMatchObject({ size: 7, contentType: 'application/json' });
    expect((await storage.getBuffer(key)).toString()).toBe('{"v":2}');
  });

  test('an explicit name, with non-ASCII characters, is kept', async () => {
    const ref = await storage.put(`${prefix}/attachment-1`, Buffer.from('x'), 'text/plain', {
      name: 'Rechnung März 2026 (final).txt',
    });

    expect(ref.name).toBe('Rechnung März 2026 (final).txt');
    expect((await storage.stat(ref))?.name).toBe('Rechnung März 2026 (final).txt');
  });

  test('keys with spaces, percent signs and non-ASCII characters round-trip through the url', async () => {
    const key = `${prefix}/dir with space/100% ünïcødé #1?.txt`;

    const ref = await storage.put(key, Buffer.from('odd key'), 'text/plain');

    expect(ref.url).toBe(blobUrlOf(key));
    expect(ref.url).not.toContain(' ');
    expect(ref.name).toBe('100% ünïcødé #1?.txt');
    expect((await storage.getBuffer(ref.url)).toString()).toBe('odd key');
  });

  test('a key and a key below it coexist', async () => {
    await storage.put(`${prefix}/a`, Buffer.from('parent'), 'text/plain');
    await storage.put(`${prefix}/a/b`, Buffer.from('child'), 'text/plain');

    expect((await storage.getBuffer(`${prefix}/a`)).toString()).toBe('parent');
    expect((await storage.getBuffer(`${prefix}/a/b`)).toString()).toBe('child');
  });

  test('a missing blob: get and getBuffer throw BlobNotFoundError, stat is undefined, exists is false', async () => {
    const key = `${prefix}/never-written`;

    await expect(storage.get(key)).rejects.toBeInstanceOf(BlobNotFoundError);
    await expect(storage.getBuffer(blobUrlOf(key))).rejects.toMatchObject({ name: 'BlobNotFoundError', key });
    expect(await storage.stat(key)).toBeUndefined();
    expect(await storage.exists(key)).toBe(false);
  });

  test('delete removes the blob and is idempotent', async () => {
    const ref = await storage.put(`${prefix}/to-delete`, Buffer.from('bye'), 'text/plain');

    await storage.delete(ref);
    await storage.delete(ref);

    expect(await storage.exists(ref)).toBe(false);
    await expect(storage.getBuffer(ref)).rejects.toBeInstanceOf(BlobNotFoundError);
  });

  test('a body stream that fails leaves no blob behind', async () => {
    const key = `${prefix}/broken-upload`;
    const failing = Readable.from(
      (async function* () {
        yield Buffer.from('partial ');
        await Promise.resolve();
        throw new Error('client went away');
      })(),
    );

    await expect(storage.put(key, failing, 'text/plain')).rejects.toThrow('client went away');
    expect(await storage.exists(key)).toBe(false);
  });

  test.each([
    ['empty', ''],
    ['parent segment', 'a/../../etc/passwd'],
    ['leading parent segment', '../outside'],
    ['current segment', 'a/./b'],
    ['absolute path', '/etc/passwd'],
    ['double slash', 'a//b'],
    ['trailing slash', 'a/'],
    ['backslash', 'a\\..\\b'],
    ['control character', 'a\u0000b'],
    ['encoded parent segment in a url', 'weft-blob://a/%2E%2E/b'],
    ['encoded slash in a url', 'weft-blob://a%2F..%2Fb'],
    ['too long', 'k'.repeat(1025)],
  ])('an invalid key (%s) is rejected by every operation', async (_case, key) => {
    await expect(storage.put(key, Buffer.from('x'), 'text/plain')).rejects.toBeInstanceOf(InvalidBlobKeyError);
    await expect(storage.get(key)).rejects.toBeInstanceOf(InvalidBlobKeyError);
    await expect(storage.stat(key)).rejects.toBeInstanceOf(InvalidBlobKeyError);
    await expect(storage.exists(key)).rejects.toBeInstanceOf(InvalidBlobKeyError);
    await expect(storage.delete(key)).rejects.toBeInstanceOf(InvalidBlobKeyError);
  });
}
