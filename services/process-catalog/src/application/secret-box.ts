import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import type { SealedSecret } from '../domain/connection/events.js';

/** Whose secret it is: the ciphertext opens only for this organization's connection. */
export interface SecretOwner {
  organizationId: string;
  connectionId: string;
}

/** Marks secrets sealed with their owner as AES-GCM additional data; secrets without it predate the binding. */
export const OWNER_BOUND = 'organization:connection';

const additionalData = (owner: SecretOwner): Buffer =>
  Buffer.from(`${owner.organizationId}:${owner.connectionId}`, 'utf8');

/**
 * Encrypts connection secrets at rest: AES-256-GCM with a key derived (HKDF-SHA256) from
 * WEFT_SECRET_KEY, so the master key itself never encrypts data and can serve other purposes.
 * The owner is authenticated as additional data, so a ciphertext copied into another
 * organization's or connection's record fails to open instead of lending its credentials.
 */
export class SecretBox {
  private readonly key: Buffer;

  constructor(masterKey: string) {
    if (masterKey.length < 16) throw new Error('WEFT_SECRET_KEY must be at least 16 characters');
    this.key = Buffer.from(hkdfSync('sha256', masterKey, 'weft', 'weft/catalog/connections/v1', 32));
  }

  /** Connections always pass their owner; without one the secret is sealed unbound, as before the binding. */
  seal(data: Record<string, unknown>, owner?: SecretOwner): SealedSecret {
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    if (owner) cipher.setAAD(additionalData(owner));
    const ciphertext = Buffer.concat([cipher.update(JSON.stringify(data), 'utf8'), cipher.final()]);
    return {
      algorithm: 'aes-256-gcm',
      ...(owner ? { boundTo: OWNER_BOUND } : {}),
      iv: iv.toString('base64'),
      tag: cipher.getAuthTag().toString('base64'),
      ciphertext: ciphertext.toString('base64'),
    };
  }

  /** Throws when the ciphertext, its tag or its owner do not match. */
  open(sealed: SealedSecret, owner?: SecretOwner): Record<string, unknown> {
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(sealed.iv, 'base64'));
    // Removing the marker does not help a copied ciphertext: its tag was computed with the owner.
    if (sealed.boundTo === OWNER_BOUND) {
      if (!owner) throw new Error('this secret is bound to its connection; its owner is required');
      decipher.setAAD(additionalData(owner));
    }
    decipher.setAuthTag(Buffer.from(sealed.tag, 'base64'));
    const clear = Buffer.concat([decipher.update(Buffer.from(sealed.ciphertext, 'base64')), decipher.final()]);
    return JSON.parse(clear.toString('utf8')) as Record<string, unknown>;
  }
}
