import { createHash, randomBytes } from 'node:crypto';

/**
 * API keys are 256 random bits, so a plain SHA-256 is a safe at-rest hash (no dictionary to
 * attack) and keeps authentication to one indexed lookup per request.
 */
export const KEY_PREFIX_LENGTH = 12;

export const generateApiKey = (): string => `weft_${randomBytes(32).toString('base64url')}`;

export const hashApiKey = (key: string): string => createHash('sha256').update(key, 'utf8').digest('hex');

export const displayPrefix = (key: string): string => key.slice(0, KEY_PREFIX_LENGTH);

/** A stable UUID derived from a key hash, so two gateways bootstrapping the same key write one stream. */
export const apiKeyIdFromHash = (hash: string): string => {
  const h = hash.slice(0, 32).split('');
  h[12] = '5';
  h[16] = ((parseInt(h[16] ?? '0', 16) & 0x3) | 0x8).toString(16);
  const s = h.join('');
  return `${s.slice(0, 8)}-${s.slice(8, 12)}-${s.slice(12, 16)}-${s.slice(16, 20)}-${s.slice(20, 32)}`;
};
