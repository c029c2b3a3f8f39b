import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { filesUrlOf, LocalDiskBlobStorage } from '@weft/blob-storage';
import type { Actor } from '@weft/bus';
import { ProblemError, type HttpReply } from '@weft/contracts';
import { fileRoutes } from '../src/adapters/http/file-routes.js';

const actor = (organizationId: string, system = false): Actor => ({
  organizationId,
  userId: 'u',
  userName: 'User',
  system,
});

describe('GET /api/v1/files/<key>', () => {
  let dir: string;
  let blobs: LocalDiskBlobStorage;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'weft-files-'));
    blobs = new LocalDiskBlobStorage(dir);
    await blobs.put('org-a/triggers/p/n/invoice 1.pdf', Buffer.from('%PDF-1.7 bytes'), 'application/pdf');
  });

  afterAll(async () => {
    await blobs.close();
    await rm(dir, { recursive: true, force: true });
  });

  const get = async (key: string, who: Actor): Promise<HttpReply | ProblemError> => {
    const route = fileRoutes({ blobs })[0]!;
    try {
      return await route.handle(
        { params: { '*': key }, query: {}, body: undefined, headers: {} },
        who,
        undefined as never,
      );
    } catch (error) {
      if (error instanceof ProblemError) return error;
      throw error;
    }
  };

  const text = async (stream: Readable): Promise<string> => {
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  };

  it('serves the blob to a key of its organization, with its type and name', async () => {
    expect(fileRoutes({ blobs })[0]!.route.path).toBe('/api/v1/files/*');
    expect(filesUrlOf('org-a/triggers/p/n/invoice 1.pdf')).toBe('/api/v1/files/org-a/triggers/p/n/invoice%201.pdf');
    const reply = (await get('org-a/triggers/p/n/invoice 1.pdf', actor('org-a'))) as HttpReply;
    expect(reply.status).toBe(200);
    expect(reply.headers).toMatchObject({
      'content-type': 'application/pdf',
      'content-disposition': "attachment; filename*=UTF-8''invoice%201.pdf",
    });
    expect(await text(reply.body as Readable)).toBe('%PDF-1.7 bytes');
  });

  it.each([
    ['another organization', 'org-a/triggers/p/n/invoice 1.pdf', 'org-b'],
    ['a prefix trick', 'org-a/triggers/p/n/invoice 1.pdf', 'org'],
    ['a missing file', 'org-a/none.pdf', 'org-a'],
    ['a dot segment', 'org-a/../org-b/x', 'org-a'],
    ['an empty key', '', 'org-a'],
  ])('answers 404 for %s', async (_case, key, organizationId) => {
    const answer = await get(key, actor(organizationId));
    expect(answer).toBeInstanceOf(ProblemError);
    expect((answer as ProblemError).problem.status).toBe(404);
  });
});
