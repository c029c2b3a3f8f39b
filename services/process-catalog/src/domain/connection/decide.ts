import { badRequest, conflict, notFound } from '@weft/contracts';
import type { Command } from '../shared/command-metadata.js';
import type { Violation } from '../shared/violation.js';
import { CONNECTION_TYPES, type ConnectionEvent, type ConnectionType, type SealedSecret } from './events.js';
import type { ConnectionState } from './state.js';

export type ConnectionCommand =
  | Command<
      'CreateConnection',
      { connectionId: string; organizationId: string; connectionType: string; name: string; sealedData: SealedSecret }
    >
  | Command<'ReplaceConnectionData', { sealedData: SealedSecret }>
  | Command<'DeleteConnection', Record<string, never>>;

export function decideConnection(command: ConnectionCommand, state: ConnectionState): ConnectionEvent[] {
  switch (command.type) {
    case 'CreateConnection': {
      if (state.status !== 'new') throw conflict(`connection ${command.data.connectionId} exists already`);
      const violations: Violation[] = [];
      if (!(CONNECTION_TYPES as readonly string[]).includes(command.data.connectionType)) {
        violations.push({ path: '/type', message: `must be one of ${CONNECTION_TYPES.join(', ')}` });
      }
      if (command.data.name.trim().length === 0)
        violations.push({ path: '/name', message: 'must be a non-empty string' });
      if (violations.length > 0) throw badRequest('invalid connection', violations);
      return [
        {
          type: 'ConnectionCreated',
          data: {
            ...command.data,
            connectionType: command.data.connectionType as ConnectionType,
            createdBy: command.metadata.actorName,
            createdById: command.metadata.actorId,
            at: command.metadata.now,
          },
        },
      ];
    }
    case 'ReplaceConnectionData':
      if (state.status !== 'active') throw notFound('connection not found');
      return [
        { type: 'ConnectionDataReplaced', data: { sealedData: command.data.sealedData, at: command.metadata.now } },
      ];
    case 'DeleteConnection':
      if (state.status !== 'active') throw notFound('connection not found');
      return [{ type: 'ConnectionDeleted', data: { at: command.metadata.now } }];
    default: {
      const unknownCommand: never = command;
      return unknownCommand;
    }
  }
}
