import { ProblemError } from '@weft/contracts';
import { decideApiKey, type IssueApiKey, type KeyActor } from '../src/domain/api-key/decide.js';
import type { ApiKeyEvent } from '../src/domain/api-key/events.js';
import { evolveApiKey, initialApiKeyState } from '../src/domain/api-key/state.js';
import { decideOrganization } from '../src/domain/organization/decide.js';
import { evolveOrganization, initialOrganizationState } from '../src/domain/organization/state.js';

const orgA = '11111111-1111-4111-8111-111111111111';
const orgB = '22222222-2222-4222-8222-222222222222';
const now = '2026-11-21T12:00:00.000Z';
const orgAdmin: KeyActor = { organizationId: orgA, userId: 'u1', userName: 'Ada', system: false };
const system: KeyActor = { organizationId: orgB, userId: 's', userName: 'system', system: true };

const issue = (overrides: Partial<IssueApiKey['data']> = {}, actor: KeyActor = orgAdmin): IssueApiKey => ({
  type: 'IssueApiKey',
  data: {
    apiKeyId: 'k1',
    organizationId: orgA,
    organizationExists: true,
    name: 'ci',
    userName: 'Bob',
    userId: 'u2',
    processIds: null,
    system: false,
    keyHash: 'a'.repeat(64),
    keyPrefix: 'weft_abcdefg',
    ...overrides,
  },
  metadata: { now, actor },
});

/** given(events).when(command) -> events or the problem status it refuses with. */
const given = (events: ApiKeyEvent[]) => ({
  when: (command: Parameters<typeof decideApiKey>[0]) => {
    const state = events.reduce(evolveApiKey, initialApiKeyState);
    try {
      return { events: decideApiKey(command, state), status: undefined };
    } catch (error) {
      if (error instanceof ProblemError) return { events: [], status: error.status };
      throw error;
    }
  },
});

describe('API key decider', () => {
  test('an organization key issues a key in its own organization', () => {
    const { events } = given([]).when(issue());
    expect(events).toEqual([
      expect.objectContaining({
        type: 'ApiKeyIssued',
        data: expect.objectContaining({ organizationId: orgA, issuedBy: 'Ada', system: false }),
      }),
    ]);
  });

  test.each([
    ['another organization', issue({ organizationId: orgB }), 404],
    ['an organization that does not exist', issue({ organizationExists: false }), 404],
    ['a system key from an organization key', issue({ system: true }), 403],
    ['any key from a key restricted to process ids', issue({}, { ...orgAdmin, processIds: [orgA] }), 403],
    ['an empty processIds list, which must not mean "every process"', issue({ processIds: [] }), 400],
  ])('refuses %s', (_name, command, status) => {
    expect(given([]).when(command).status).toBe(status);
  });

  test('a system key issues system keys in any organization', () => {
    const { events } = given([]).when(issue({ organizationId: orgB, system: true }, system));
    expect(events[0]?.type).toBe('ApiKeyIssued');
  });

  test('revoking: once, only within the organization', () => {
    const issued = given([]).when(issue()).events;
    const revoke = (actor: KeyActor) => ({
      type: 'RevokeApiKey' as const,
      data: { apiKeyId: 'k1' },
      metadata: { now, actor },
    });
    expect(given(issued).when(revoke({ ...orgAdmin, organizationId: orgB })).status).toBe(404);
    const revoked = given(issued).when(revoke(orgAdmin)).events;
    expect(revoked).toEqual([
      expect.objectContaining({ type: 'ApiKeyRevoked', data: expect.objectContaining({ organizationId: orgA }) }),
    ]);
    expect(given([...issued, ...revoked]).when(revoke(orgAdmin)).status).toBe(404);
    expect(given([]).when(revoke(system)).status).toBe(404);
    expect(given(issued).when(revoke({ ...orgAdmin, processIds: [orgA] })).status).toBe(403);
  });
});

describe('organization decider', () => {
  test('creates once', () => {
    const command = {
      type: 'CreateOrganization' as const,
      data: { organizationId: orgA, name: 'Acme' },
      metadata: { now, actorName: 'system', actorId: 's' },
    };
    const events = decideOrganization(command, initialOrganizationState);
    expect(events).toEqual([
      expect.objectContaining({
        type: 'OrganizationCreated',
        data: expect.objectContaining({ name: 'Acme', createdAt: now }),
      }),
    ]);
    const state = events.reduce(evolveOrganization, initialOrganizationState);
    expect(() => decideOrganization(command, state)).toThrow(ProblemError);
  });
});
