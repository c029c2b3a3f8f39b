import { Controller, Inject } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { catalogInternal, notFound, type DecryptedConnection, type ProcessRecord } from '@weft/contracts';
import { sql } from 'kysely';
import type { CatalogApplication } from '../../application/catalog-application.js';
import { CATALOG_APPLICATION } from './catalog-tokens.js';

/** Subjects other services call (engine, trigger, testing); never reachable over HTTP. */
@Controller()
export class CatalogInternalController {
  constructor(@Inject(CATALOG_APPLICATION) private readonly app: CatalogApplication) {}

  @MessagePattern(catalogInternal.getProcess.subject)
  async getProcess(@Payload() request: { processId: string; organizationId?: string }): Promise<ProcessRecord> {
    const found = await this.app.queries.state(request.processId);
    if (!found || (request.organizationId !== undefined && found.state.organizationId !== request.organizationId)) {
      throw notFound(`process ${request.processId} not found`);
    }
    return this.app.queries.getProcess(request.processId, {
      actor: {
        organizationId: found.state.organizationId,
        userId: 'process-catalog',
        userName: 'process-catalog',
        system: true,
      },
    });
  }

  /** Every running process, for the trigger service to restore its listeners (ids, organization, revision). */
  @MessagePattern(catalogInternal.listRunningProcesses.subject)
  async listRunningProcesses(): Promise<{
    processes: { processId: string; organizationId: string; revision: number }[];
  }> {
    const rows = await this.app.store.db
      .selectFrom('catalog_processes')
      .select(['id', 'organization_id', 'revision'])
      .where(sql<string>`state->>'isRunning'`, '=', 'true')
      .orderBy('id')
      .execute();
    return {
      processes: rows.map((row) => ({
        processId: String(row.id),
        organizationId: String(row.organization_id),
        revision: Number(row.revision),
      })),
    };
  }

  /** A refreshed OAuth token from a mail listener, sealed and appended as ConnectionDataReplaced. */
  @MessagePattern(catalogInternal.replaceConnectionData.subject)
  async replaceConnectionData(
    @Payload() request: { connectionId: string; organizationId: string; data: Record<string, unknown> },
  ): Promise<{ connectionId: string }> {
    await this.app.connections.replaceData(request.connectionId, request.organizationId, request.data, {
      actor: { organizationId: request.organizationId, userId: 'trigger', userName: 'trigger', system: true },
    });
    return { connectionId: request.connectionId };
  }

  /** The JSON schema of one data block, for webhook payload validation. */
  @MessagePattern(catalogInternal.getDataBlockSchema.subject)
  async getDataBlockSchema(
    @Payload() request: { schemaId: string; dataBlockId: string; organizationId: string },
  ): Promise<{ schemaId: string; dataBlockId: string; jsonSchema: unknown }> {
    const schema = await this.app.schemas.find(request.schemaId);
    const block =
      schema?.organizationId === request.organizationId
        ? schema.dataBlocks.find((candidate) => candidate.id === request.dataBlockId)
        : undefined;
    if (!block) throw notFound(`data block ${request.dataBlockId} of schema ${request.schemaId} not found`);
    return { schemaId: request.schemaId, dataBlockId: request.dataBlockId, jsonSchema: block.jsonSchema };
  }

  /** The named data blocks of a schema (those not in it are left out), for the engine's schematization node. */
  @MessagePattern(catalogInternal.getSchemaDataBlocks.subject)
  async getSchemaDataBlocks(
    @Payload() request: { schemaId: string; organizationId: string; names: string[] },
  ): Promise<{ schemaId: string; dataBlocks: { id: string; name: string; jsonSchema: unknown }[] }> {
    const schema = await this.app.schemas.find(request.schemaId);
    if (schema?.organizationId !== request.organizationId) throw notFound(`schema ${request.schemaId} not found`);
    const wanted = new Set(request.names);
    return {
      schemaId: request.schemaId,
      dataBlocks: schema.dataBlocks
        .filter((block) => wanted.has(block.name))
        .map((block) => ({ id: block.id, name: block.name, jsonSchema: block.jsonSchema })),
    };
  }

  @MessagePattern(catalogInternal.getConnectionSecret.subject)
  async getConnectionSecret(
    @Payload() request: { connectionId: string; organizationId: string },
  ): Promise<DecryptedConnection> {
    return this.app.connections.decrypted(request.connectionId, request.organizationId);
  }
}
