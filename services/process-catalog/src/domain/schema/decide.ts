import { badRequest, conflict, notFound } from '@weft/contracts';
import type { Command } from '../shared/command-metadata.js';
import { isUuid } from '../shared/uuid.js';
import { sameJson } from '../shared/same-json.js';
import type { Violation } from '../shared/violation.js';
import type { DataBlock, SchemaContent, SchemaEvent } from './events.js';
import type { SchemaState } from './state.js';

/**
 * `jsonSchemaErrors` holds the compiler's verdict per block index, filled by the application
 * (ajv), so the decider stays pure and still refuses a schema that does not compile.
 */
export type SchemaCommand =
  | Command<
      'CreateSchema',
      SchemaContent & {
        schemaId: string;
        organizationId: string;
        importedFrom?: string;
        jsonSchemaErrors: Record<number, string>;
      }
    >
  | Command<'ChangeSchema', { changes: Partial<SchemaContent>; jsonSchemaErrors: Record<number, string> }>
  | Command<'DeleteSchema', Record<string, never>>;

function dataBlockViolations(blocks: readonly DataBlock[], compileErrors: Record<number, string>): Violation[] {
  const violations: Violation[] = [];
  const ids = new Set<string>();
  const names = new Set<string>();
  blocks.forEach((block, index) => {
    const path = `/dataBlocks/${index}`;
    if (!isUuid(block.id)) violations.push({ path: `${path}/id`, message: 'must be a UUID' });
    else if (ids.has(block.id)) violations.push({ path: `${path}/id`, message: 'is used by another data block' });
    if (block.name.trim().length === 0)
      violations.push({ path: `${path}/name`, message: 'must be a non-empty string' });
    else if (names.has(block.name))
      violations.push({ path: `${path}/name`, message: `"${block.name}" is used by another data block` });
    const compileError = compileErrors[index];
    if (compileError !== undefined)
      violations.push({ path: `${path}/jsonSchema`, message: `does not compile: ${compileError}` });
    ids.add(block.id);
    names.add(block.name);
  });
  return violations;
}

function contentViolations(content: Partial<SchemaContent>, compileErrors: Record<number, string>): Violation[] {
  const violations: Violation[] = [];
  if (content.name !== undefined && content.name.trim().length === 0) {
    violations.push({ path: '/name', message: 'must be a non-empty string' });
  }
  if (content.dataBlocks) violations.push(...dataBlockViolations(content.dataBlocks, compileErrors));
  return violations;
}

const refuse = (violations: Violation[]): void => {
  if (violations.length > 0) throw badRequest('invalid schema', violations);
};

export function decideSchema(command: SchemaCommand, state: SchemaState): SchemaEvent[] {
  const at = command.metadata.now;
  switch (command.type) {
    case 'CreateSchema': {
      if (state.status !== 'new') throw conflict(`schema ${command.data.schemaId} exists already`);
      const { jsonSchemaErrors, importedFrom, ...content } = command.data;
      refuse(contentViolations(content, jsonSchemaErrors));
      return [
        {
          type: 'SchemaCreated',
          data: {
            ...content,
            ...(importedFrom ? { importedFrom } : {}),
            createdBy: command.metadata.actorName,
            createdById: command.metadata.actorId,
            at,
          },
        },
      ];
    }
    case 'ChangeSchema': {
      if (state.status !== 'active') throw notFound('schema not found');
      refuse(contentViolations(command.data.changes, command.data.jsonSchemaErrors));
      const changes = Object.fromEntries(
        Object.entries(command.data.changes).filter(
          ([key, value]) => value !== undefined && !sameJson(value, state[key as keyof SchemaContent]),
        ),
      );
      return Object.keys(changes).length === 0 ? [] : [{ type: 'SchemaChanged', data: { changes, at } }];
    }
    case 'DeleteSchema':
      if (state.status !== 'active') throw notFound('schema not found');
      return [{ type: 'SchemaDeleted', data: { at } }];
    default: {
      const unknownCommand: never = command;
      return unknownCommand;
    }
  }
}
