import { createHash } from 'node:crypto';

/** UUID v5 namespace of Weft trigger firings (a fixed random UUID). */
const NAMESPACE = Buffer.from('6f1c2b0e8d4a4f3b9e51a7c2d9b04e17', 'hex');

/**
 * The execution id of one firing, derived from (process, input node, dedupe key) as a UUID v5
 * (RFC 9562): a refire with the same key names the same execution, which the engine starts once.
 */
export function firingExecutionId(processId: string, nodeId: string, dedupeKey: string): string {
  const hash = createHash('sha1')
    .update(NAMESPACE)
    .update(JSON.stringify([processId, nodeId, dedupeKey]))
    .digest();
  const bytes = hash.subarray(0, 16);
  bytes[6] = (bytes[6]! & 0x0f) | 0x50;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
