import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import type { SealedSecret } from '../domain/connection/events.js';

/**
 * Encrypts connection secrets at rest: AES-256-GCM with a key derived (HKDF-SHA256) from
 * WEFT_SECRET_KEY, so the master key itself never encrypts data and can serve other purposes.
 */
export class SecretBox {
  private readonly key: Buffer;

  constructor(masterKey: string) {
    if (masterKey.length < 16) throw new Error('WEFT_SECRET_KEY must be at least 16 characters');
    this.key = Buffer.from(hkdfSync('sha256', masterKey, 'weft', 'weft/catalog/connections/v1', 32));
  }

  seal(data: Record<string, unknown>): SealedSecret {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    const ciphertext = Buffer.concat([cipher.update(JSON.stringify(data), 'utf8'), cipher.final()]);
    return {
      algorithm: 'aes-256-gcm',
      iv: iv.toString('base64'),
      tag: cipher.getAuthTag().toString('base64'),
      ciphertext: ciphertext.toString('base64'),
    };
  }

  open(sealed: SealedSecret): Record<string, unknown> {
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(sealed.iv, 'base64'));
    decipher.setAuthTag(Buffer.from(sealed.tag, 'base64'));
    const clear = Buffer.concat([decipher.update(Buffer.from(sealed.ciphertext, 'base64')), decipher.final()]);
    return JSON.parse(clear.toString('utf8')) as Record<string, unknown>;
  }
}
