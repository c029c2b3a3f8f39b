import { randomUUID } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { Multipart } from '@fastify/multipart';
import { toKeySegment, type BlobStorage, type FileReference } from '@weft/blob-storage';
import { ProblemError, type UploadedForm } from '@weft/contracts';

/** The request as @fastify/multipart decorates it (its type augmentation does not reach this package's fastify). */
export type MultipartRequest = FastifyRequest & {
  isMultipart(): boolean;
  parts(): AsyncIterableIterator<Multipart>;
};

/**
 * A multipart/form-data body of a route that takes uploads (the webhook): each file is streamed
 * into blob storage as it arrives, so file bytes never cross the bus; the owning service receives
 * the form fields and the files' references. Size limits are @fastify/multipart's (413 past them).
 */
export async function readUploads(
  request: MultipartRequest,
  blobs: BlobStorage,
  keyPrefix: string,
  maxFieldBytes: number,
): Promise<{ form: UploadedForm; stored: FileReference[] }> {
  const form: UploadedForm = { fields: {}, files: [] };
  const stored: FileReference[] = [];
  // Fields are held in memory (files stream to storage): together they stay within the body limit.
  let fieldBytes = 0;
  try {
    for await (const part of request.parts()) {
      if (part.type === 'file') {
        const name = part.filename || part.fieldname || 'file';
        const key = `${keyPrefix}/${randomUUID()}/${toKeySegment(name)}`;
        const reference = await blobs.put(key, part.file, part.mimetype || 'application/octet-stream', { name });
        stored.push(reference);
        if (part.file.truncated) throw new ProblemError(413, `file "${name}" is larger than the limit`);
        form.files.push({ field: part.fieldname, ...reference });
      } else {
        if (part.valueTruncated) throw new ProblemError(413, `form field "${part.fieldname}" is larger than the limit`);
        const value = String(part.value);
        fieldBytes += Buffer.byteLength(part.fieldname) + Buffer.byteLength(value);
        if (fieldBytes > maxFieldBytes)
          throw new ProblemError(413, `the form fields are larger than ${maxFieldBytes} bytes in all`);
        const earlier = form.fields[part.fieldname];
        form.fields[part.fieldname] =
          earlier === undefined ? value : Array.isArray(earlier) ? [...earlier, value] : [earlier, value];
      }
    }
  } catch (error) {
    await discardUploads(blobs, stored);
    throw error;
  }
  return { form, stored };
}

/** Removes the stored files of a request that was refused (no execution will read them). */
export async function discardUploads(blobs: BlobStorage, stored: readonly FileReference[]): Promise<void> {
  await Promise.allSettled(stored.map((reference) => blobs.delete(reference)));
}
