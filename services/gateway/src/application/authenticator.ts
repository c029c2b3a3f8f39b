import type { Actor } from '@weft/bus';
import { hashApiKey } from './api-key-secret.js';
import type { GatewayReadModels } from './gateway-read-models.js';

/**
 * Resolves an API key to its actor. Results are cached briefly so a burst of webhook calls costs
 * one lookup; a revoke on this gateway clears the cache at once, other replicas within the TTL.
 */
export class Authenticator {
  private readonly cache = new Map<string, { actor: Actor | undefined; expiresAt: number }>();

  constructor(
    private readonly readModels: GatewayReadModels,
    private readonly ttlMs = 5_000,
    private readonly maxEntries = 10_000,
  ) {}

  async authenticate(key: string): Promise<Actor | undefined> {
    const hash = hashApiKey(key);
    const now = Date.now();
    const hit = this.cache.get(hash);
    if (hit && hit.expiresAt > now) return hit.actor;
    const actor = await this.readModels.actorForKeyHash(hash);
    if (this.cache.size >= this.maxEntries) this.cache.clear();
    this.cache.set(hash, { actor, expiresAt: now + this.ttlMs });
    return actor;
  }

  forget(): void {
    this.cache.clear();
  }
}
