import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ProblemError } from '@weft/contracts';
import type { Actor } from '@weft/bus';
import type { EventStore } from '@weft/event-store';
import type { ApiKeyCommands } from './api-key-commands.js';
import { apiKeyIdFromHash, generateApiKey, hashApiKey } from './api-key-secret.js';
import type { GatewayReadModels } from './gateway-read-models.js';
import { createOrganization } from './organization-commands.js';
import {
  SYSTEM_ORGANIZATION_ID,
  SYSTEM_ORGANIZATION_NAME,
  SYSTEM_USER_ID,
  SYSTEM_USER_NAME,
} from './system-identity.js';

export const BOOTSTRAP_KEY_FILE = 'bootstrap-api-key';

const systemActor: Actor = {
  organizationId: SYSTEM_ORGANIZATION_ID,
  userId: SYSTEM_USER_ID,
  userName: SYSTEM_USER_NAME,
  system: true,
};

const ignoreConflict = (error: unknown): void => {
  // Another gateway replica did the same bootstrap step first.
  if (!(error instanceof ProblemError && error.status === 409)) throw error;
};

export interface BootstrapResult {
  /** Set only when a new key was generated (first start without WEFT_BOOTSTRAP_API_KEY). */
  generatedKey?: string;
  keyFile?: string;
}

/**
 * WEFT_BOOTSTRAP_API_KEY: a system key with exactly that value exists after start.
 * Without it, the very first start (no active system key at all) generates one, and the caller
 * prints it once; it is also written to <dataDir>/bootstrap-api-key, readable only by its owner.
 */
export async function ensureBootstrapKey(
  store: EventStore,
  readModels: GatewayReadModels,
  keys: ApiKeyCommands,
  options: { bootstrapApiKey?: string; dataDir: string },
): Promise<BootstrapResult> {
  const wanted = options.bootstrapApiKey;
  if (wanted === undefined && (await readModels.hasActiveSystemKey())) return {};
  if (wanted !== undefined && (await readModels.actorForKeyHash(hashApiKey(wanted)))?.system) return {};

  if (!(await readModels.organization(SYSTEM_ORGANIZATION_ID))) {
    await createOrganization(store, SYSTEM_ORGANIZATION_NAME, systemActor, {
      organizationId: SYSTEM_ORGANIZATION_ID,
    }).catch(ignoreConflict);
  }
  const key = wanted ?? generateApiKey();
  await keys
    .issue(
      SYSTEM_ORGANIZATION_ID,
      {
        name: wanted ? 'bootstrap (WEFT_BOOTSTRAP_API_KEY)' : 'bootstrap',
        userName: SYSTEM_USER_NAME,
        userId: SYSTEM_USER_ID,
        system: true,
      },
      systemActor,
      { key, apiKeyId: apiKeyIdFromHash(hashApiKey(key)) },
    )
    .catch(ignoreConflict);
  if (wanted !== undefined) return {};

  await mkdir(options.dataDir, { recursive: true });
  const keyFile = join(options.dataDir, BOOTSTRAP_KEY_FILE);
  await writeFile(keyFile, `${key}\n`, { mode: 0o600 });
  await chmod(keyFile, 0o600);
  return { generatedKey: key, keyFile };
}
