import { Controller, Inject } from '@nestjs/common';
import { MessagePattern, Payload } from '@nestjs/microservices';
import { catalogInternal, notFound, type DecryptedConnection, type ProcessRecord } from '@weft/contracts';
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

  @MessagePattern(catalogInternal.getConnectionSecret.subject)
  async getConnectionSecret(
    @Payload() request: { connectionId: string; organizationId: string },
  ): Promise<DecryptedConnection> {
    return this.app.connections.decrypted(request.connectionId, request.organizationId);
  }
}
