import { assertValidBlobKey, BlobNotFoundError, InvalidBlobKeyError, type BlobStorage } from '@weft/blob-storage';
import { notFound } from '@weft/contracts';
import type { RouteBinding } from './route-binding.js';

/**
 * `GET /api/v1/files/<key>`: a stored file (a mail attachment, a webhook upload) for a key of the
 * organization whose prefix the blob key carries; any other organization's key gets 404.
 */
export function fileRoutes(deps: { blobs: BlobStorage }): RouteBinding[] {
  return [
    {
      route: {
        method: 'GET',
        path: '/api/v1/files/*',
        summary: 'Download a stored file (mail attachment, webhook upload) of your organization.',
        tag: 'files',
        unrestrictedOnly: true,
      },
      async handle(call, actor) {
        const key = call.params['*'] ?? '';
        try {
          assertValidBlobKey(key);
        } catch (error) {
          if (error instanceof InvalidBlobKeyError) throw notFound('file not found');
          throw error;
        }
        if (!actor.system && !key.startsWith(`${actor.organizationId}/`)) throw notFound('file not found');
        const reference = await deps.blobs.stat(key);
        if (!reference) throw notFound('file not found');
        try {
          // Streamed: an attachment is never held whole in the gateway's memory.
          const body = await deps.blobs.get(key);
          return {
            status: 200,
            body,
            headers: {
              'content-type': reference.contentType || 'application/octet-stream',
              'content-disposition': `attachment; filename*=UTF-8''${encodeURIComponent(reference.name)}`,
              'x-content-type-options': 'nosniff',
            },
          };
        } catch (error) {
          if (error instanceof BlobNotFoundError) throw notFound('file not found');
          throw error;
        }
      },
    },
  ];
}
