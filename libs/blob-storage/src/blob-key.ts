import { BlobTarget, InvalidBlobKeyError } from './blob-storage.js';

/**
 * Keys are '/'-separated relative paths (`org-1/executions/e-7/invoice.pdf`). Both adapters accept
 * exactly the same keys, so a key that works embedded also works on S3 and the other way round.
 */

export const BLOB_URL_SCHEME = 'weft-blob://';
const MAX_KEY_BYTES = 1024; // S3's own limit
// eslint-disable-next-line no-control-regex
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/;

export function assertValidBlobKey(key: string): string {
  if (key.length === 0) throw new InvalidBlobKeyError(key, 'empty');
  if (Buffer.byteLength(key) > MAX_KEY_BYTES) throw new InvalidBlobKeyError(key, `longer than ${MAX_KEY_BYTES} bytes`);
  if (CONTROL_CHARACTERS.test(key)) throw new InvalidBlobKeyError(key, 'contains control characters');
  if (key.includes('\\')) throw new InvalidBlobKeyError(key, 'contains a backslash');
  for (const segment of key.split('/')) {
    if (segment === '') throw new InvalidBlobKeyError(key, 'has an empty segment (leading, trailing or double "/")');
    if (segment === '.' || segment === '..') throw new InvalidBlobKeyError(key, `has a "${segment}" segment`);
  }
  return key;
}

/** Turns any user-supplied file name into one safe key segment, e.g. for mail attachments. */
export function toKeySegment(fileName: string): string {
  // eslint-disable-next-line no-control-regex
  const cleaned = fileName.replace(/[\u0000-\u001f\u007f/\\]/g, '_').trim();
  if (cleaned === '' || cleaned === '.' || cleaned === '..') return '_';
  // Keep the end (the extension) when a name is absurdly long.
  return cleaned.length > 200 ? cleaned.slice(-200) : cleaned;
}

/** Where the gateway serves a blob to a key of its organization (`GET /api/v1/files/<key>`). */
export const FILES_URL_PATH = '/api/v1/files/';

export function filesUrlOf(key: string): string {
  return FILES_URL_PATH + assertValidBlobKey(key).split('/').map(encodeURIComponent).join('/');
}

export function blobUrlOf(key: string): string {
  return BLOB_URL_SCHEME + assertValidBlobKey(key).split('/').map(encodeURIComponent).join('/');
}

/** The key a reference, url or plain key names; validated. */
export function blobKeyOf(target: BlobTarget): string {
  const text = typeof target === 'string' ? target : target.url;
  // Mail attachments carry their download address; it names the same blob.
  const scheme = text.startsWith(BLOB_URL_SCHEME)
    ? BLOB_URL_SCHEME
    : text.startsWith(FILES_URL_PATH)
      ? FILES_URL_PATH
      : undefined;
  if (!scheme) return assertValidBlobKey(text);
  const encoded = text.slice(scheme.length);
  let key: string;
  try {
    key = encoded.split('/').map(decodeURIComponent).join('/');
  } catch {
    throw new InvalidBlobKeyError(text, 'malformed percent-encoding');
  }
  // A decoded segment must not smuggle in a '/', which would change how the key splits.
  if (encoded.split('/').length !== key.split('/').length) throw new InvalidBlobKeyError(text, 'encoded "/"');
  return assertValidBlobKey(key);
}

export function defaultNameOf(key: string): string {
  return key.slice(key.lastIndexOf('/') + 1);
}
