import { randomUUID } from 'node:crypto';
import type { CreateApiKeyBody, IssuedApiKeyView } from '@weft/contracts';
import type { Actor } from '@weft/bus';
import type { EventStore } from '@weft/event-store';
import { decideApiKey, type ApiKeyCommand } from '../domain/api-key/decide.js';
import { apiKeyStream, type ApiKeyEvent } from '../domain/api-key/events.js';
import { evolveApiKey, initialApiKeyState, type ApiKeyState } from '../domain/api-key/state.js';
import { runAggregateCommand, type Aggregate } from './aggregate-command.js';
import { displayPrefix, generateApiKey, hashApiKey } from './api-key-secret.js';
import type { GatewayReadModels } from './gateway-read-models.js';

const apiKeyAggregate: Aggregate<ApiKeyState, ApiKeyEvent, ApiKeyCommand> = {
  initial: initialApiKeyState,
  evolve: evolveApiKey,
  decide: decideApiKey,
};

export interface IssueOptions {
  /** Use this key value instead of a random one (WEFT_BOOTSTRAP_API_KEY). */
  key?: string;
  apiKeyId?: string;
  traceId?: string;
}

export class ApiKeyCommands {
  constructor(
    private readonly store: EventStore,
    private readonly readModels: GatewayReadModels,
  ) {}

  async issue(
    organizationId: string,
    body: CreateApiKeyBody,
    actor: Actor,
    options: IssueOptions = {},
  ): Promise<IssuedApiKeyView> {
    const key = options.key ?? generateApiKey();
    const apiKeyId = options.apiKeyId ?? randomUUID();
    const now = new Date().toISOString();
    const organizationExists = (await this.readModels.organization(organizationId)) !== undefined;
    const processIds = body.processIds ?? null;
    await runAggregateCommand(
      this.store,
      apiKeyStream(apiKeyId),
      apiKeyAggregate,
      {
        type: 'IssueApiKey',
        data: {
          apiKeyId,
          organizationId,
          organizationExists,
          name: body.name,
          userName: body.userName,
          userId: body.userId,
          processIds,
          system: body.system ?? false,
          keyHash: hashApiKey(key),
          keyPrefix: displayPrefix(key),
        },
        metadata: { now, actor },
      },
      { actorId: actor.userId, actorName: actor.userName, organizationId, traceId: options.traceId },
    );
    return {
      id: apiKeyId,
      organizationId,
      name: body.name,
      userName: body.userName,
      userId: body.userId,
      processIds,
      system: body.system ?? false,
      keyPrefix: displayPrefix(key),
      createdAt: now,
      key,
    };
  }

  async revoke(apiKeyId: string, actor: Actor, traceId?: string): Promise<void> {
    const existing = await this.readModels.apiKey(apiKeyId);
    await runAggregateCommand(
      this.store,
      apiKeyStream(apiKeyId),
      apiKeyAggregate,
      { type: 'RevokeApiKey', data: { apiKeyId }, metadata: { now: new Date().toISOString(), actor } },
      { actorId: actor.userId, actorName: actor.userName, organizationId: existing?.organizationId, traceId },
    );
  }
}
