import type { BlobStorage } from '@weft/blob-storage';
import type { StoredValueRef } from '@weft/contracts';
import type { ValueStore } from '../application/event-values.js';

/** Event values too large to store inline, as JSON text in the configured blob storage (S3 or the data dir). */
export const blobValueStore = (storage: BlobStorage): ValueStore => ({
  async put(key, json) {
    await storage.put(key, Buffer.from(json), 'application/json');
  },
  async get(ref: StoredValueRef) {
    return JSON.parse((await storage.getBuffer(ref.url)).toString('utf8')) as unknown;
  },
});
