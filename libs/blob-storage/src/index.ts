export * from './blob-storage.js';
export {
  BLOB_URL_SCHEME,
  FILES_URL_PATH,
  assertValidBlobKey,
  blobKeyOf,
  blobUrlOf,
  filesUrlOf,
  toKeySegment,
} from './blob-key.js';
export * from './adapters/local-disk-blob-storage.js';
export * from './adapters/s3-blob-storage.js';
export * from './create-blob-storage.js';
