import { badRequest, conflict, forbidden, notFound } from '@weft/contracts';
import type { ApiKeyEvent } from './events.js';
import type { ApiKeyState } from './state.js';

/** Who asks; the domain only needs to know whether they act across organizations. */
export interface KeyActor {
  organizationId: string;
  userId: string;
  userName: string;
  system: boolean;
  /** Set for keys restricted to some processes: they manage no keys. */
  processIds?: string[];
}

export interface IssueApiKey {
  type: 'IssueApiKey';
  data: {
    apiKeyId: string;
    organizationId: string;
    organizationExists: boolean;
    name: string;
    userName: string;
    userId: string;
    processIds: string[] | null;
    system: boolean;
    keyHash: string;
    keyPrefix: string;
  };
  metadata: { now: string; actor: KeyActor };
}

export interface RevokeApiKey {
  type: 'RevokeApiKey';
  data: { apiKeyId: string };
  metadata: { now: string; actor: KeyActor };
}

export type ApiKeyCommand = IssueApiKey | RevokeApiKey;

const refuseRestricted = (actor: KeyActor): void => {
  if (actor.processIds) throw forbidden('a key restricted to some processes cannot manage API keys');
};

const canReach = (actor: KeyActor, organizationId: string | undefined): boolean =>
  actor.system || actor.organizationId === organizationId;

export function decideApiKey(command: ApiKeyCommand, state: ApiKeyState): ApiKeyEvent[] {
  switch (command.type) {
    case 'IssueApiKey': {
      const { data, metadata } = command;
      refuseRestricted(metadata.actor);
      // Another organization's resources do not exist for this key (DESIGN.md: 404, not 403).
      if (!data.organizationExists || !canReach(metadata.actor, data.organizationId)) {
        throw notFound(`organization ${data.organizationId} not found`);
      }
      if (data.system && !metadata.actor.system) throw forbidden('only a system key may issue system keys');
      // An empty list must never mean "every process".
      if (data.processIds?.length === 0) {
        throw badRequest('processIds must name at least one process', [
          { path: '/processIds', message: 'must NOT have fewer than 1 items' },
        ]);
      }
      if (state.status !== 'absent') throw conflict(`api key ${data.apiKeyId} already exists`);
      return [
        {
          type: 'ApiKeyIssued',
          data: {
            apiKeyId: data.apiKeyId,
            organizationId: data.organizationId,
            name: data.name,
            userName: data.userName,
            userId: data.userId,
            processIds: data.processIds,
            system: data.system,
            keyHash: data.keyHash,
            keyPrefix: data.keyPrefix,
            issuedAt: metadata.now,
            issuedBy: metadata.actor.userName,
            issuedById: metadata.actor.userId,
          },
        },
      ];
    }
    case 'RevokeApiKey': {
      const { actor, now } = command.metadata;
      refuseRestricted(actor);
      if (state.status !== 'active' || !canReach(actor, state.organizationId)) {
        throw notFound(`api key ${command.data.apiKeyId} not found`);
      }
      return [
        {
          type: 'ApiKeyRevoked',
          data: {
            apiKeyId: command.data.apiKeyId,
            organizationId: state.organizationId ?? '',
            revokedAt: now,
            revokedBy: actor.userName,
            revokedById: actor.userId,
          },
        },
      ];
    }
    default: {
      const unknownCommand: never = command;
      return unknownCommand;
    }
  }
}
