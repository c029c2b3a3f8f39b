import { ProblemError } from '@weft/contracts';
import { SecretBox } from '../src/application/secret-box.js';
import { decideCollection, type CollectionCommand } from '../src/domain/collection/decide.js';
import type { CollectionEvent } from '../src/domain/collection/events.js';
import { evolveCollection, initialCollectionState } from '../src/domain/collection/state.js';
import { decideConnection } from '../src/domain/connection/decide.js';
import { initialConnectionState } from '../src/domain/connection/state.js';
import { decideSchema, type SchemaCommand } from '../src/domain/schema/decide.js';
import { initialSchemaState } from '../src/domain/schema/state.js';
import { metadata } from './fixtures/process-decider-spec.js';

const at = metadata.now;
const statusOf = (work: () => unknown): number | undefined => {
  try {
    work();
  } catch (error) {
    if (error instanceof ProblemError) return error.status;
    throw error;
  }
  return undefined;
};

describe('collection decider', () => {
  const created: CollectionEvent = {
    type: 'CollectionCreated',
    data: {
      collectionId: 'c1',
      kind: 'process',
      organizationId: 'o',
      name: 'Top',
      description: '',
      parentCollectionId: null,
      createdBy: 'Ada',
      createdById: metadata.actorId,
      at,
    },
  };
  const given = (events: CollectionEvent[]) => events.reduce(evolveCollection, initialCollectionState());
  const when = (events: CollectionEvent[], command: Omit<CollectionCommand, 'metadata'>) =>
    decideCollection({ ...command, metadata } as CollectionCommand, given(events));

  test('membership is idempotent', () => {
    const added: CollectionEvent = { type: 'CollectionMemberAdded', data: { memberId: 'p', at } };
    expect(when([created], { type: 'AddCollectionMember', data: { memberId: 'p' } })).toEqual([added]);
    expect(when([created, added], { type: 'AddCollectionMember', data: { memberId: 'p' } })).toEqual([]);
    expect(when([created], { type: 'RemoveCollectionMember', data: { memberId: 'p' } })).toEqual([]);
  });

  test('a collection cannot become its own ancestor', () => {
    expect(
      statusOf(() =>
        when([created], {
          type: 'ChangeCollection',
          data: { changes: { parentCollectionId: 'c1' }, ancestorsOfNewParent: [] },
        }),
      ),
    ).toBe(400);
    expect(
      statusOf(() =>
        when([created], {
          type: 'ChangeCollection',
          data: { changes: { parentCollectionId: 'c3' }, ancestorsOfNewParent: ['c3', 'c2', 'c1'] },
        }),
      ),
    ).toBe(400);
    expect(
      when([created], {
        type: 'ChangeCollection',
        data: { changes: { parentCollectionId: 'c9' }, ancestorsOfNewParent: ['c9'] },
      }),
    ).toEqual([{ type: 'CollectionChanged', data: { changes: { parentCollectionId: 'c9' }, at } }]);
  });

  test('a deleted collection is gone', () => {
    expect(
      statusOf(() =>
        when([created, { type: 'CollectionDeleted', data: { at } }], { type: 'ViewCollection', data: {} }),
      ),
    ).toBe(404);
  });
});

describe('schema decider', () => {
  const create = (
    dataBlocks: { id: string; name: string }[],
    jsonSchemaErrors: Record<number, string> = {},
  ): SchemaCommand => ({
    type: 'CreateSchema',
    data: {
      schemaId: 's',
      organizationId: 'o',
      name: 'S',
      description: '',
      dataBlocks: dataBlocks.map((block) => ({ ...block, description: '', jsonSchema: {} })),
      jsonSchemaErrors,
    },
    metadata,
  });
  const id1 = '00000000-0000-4000-8000-000000000001';
  const id2 = '00000000-0000-4000-8000-000000000002';

  test('refuses duplicate block names and schemas that do not compile, listing each', () => {
    let problem: ProblemError | undefined;
    try {
      decideSchema(
        create(
          [
            { id: id1, name: 'a' },
            { id: id2, name: 'a' },
          ],
          { 0: 'bad type' },
        ),
        initialSchemaState(),
      );
    } catch (error) {
      problem = error as ProblemError;
    }
    expect(problem?.problem.errors).toEqual([
      { path: '/dataBlocks/0/jsonSchema', message: 'does not compile: bad type' },
      { path: '/dataBlocks/1/name', message: '"a" is used by another data block' },
    ]);
  });

  test('creates a schema with its blocks', () => {
    expect(decideSchema(create([{ id: id1, name: 'a' }]), initialSchemaState())[0]?.type).toBe('SchemaCreated');
  });
});

describe('connection decider and secret box', () => {
  const box = new SecretBox('a-long-enough-master-key');

  test('a connection event carries only the sealed secret', () => {
    const secret = { user: 'grace', password: 'hunter2' };
    const sealedData = box.seal(secret);
    const events = decideConnection(
      {
        type: 'CreateConnection',
        data: { connectionId: 'c', organizationId: 'o', connectionType: 'mysql', name: 'DB', sealedData },
        metadata,
      },
      initialConnectionState(),
    );
    // Exactly these fields: the ciphertext as the application sealed it, and nothing the decider adds beside it.
    expect(events).toEqual([
      {
        type: 'ConnectionCreated',
        data: {
          connectionId: 'c',
          organizationId: 'o',
          connectionType: 'mysql',
          name: 'DB',
          sealedData,
          createdBy: metadata.actorName,
          createdById: metadata.actorId,
          at,
        },
      },
    ]);
    expect(JSON.stringify(events)).not.toMatch(/grace|hunter2/);
    expect(box.open((events[0] as { data: { sealedData: typeof sealedData } }).data.sealedData)).toEqual(secret);
  });

  test('unknown types are refused; another key cannot open a secret', () => {
    expect(
      statusOf(() =>
        decideConnection(
          {
            type: 'CreateConnection',
            data: {
              connectionId: 'c',
              organizationId: 'o',
              connectionType: 'ftp',
              name: 'x',
              sealedData: box.seal({}),
            },
            metadata,
          },
          initialConnectionState(),
        ),
      ),
    ).toBe(400);
    expect(() => new SecretBox('another-master-key-value').open(box.seal({ a: 1 }))).toThrow();
  });
});
