import { catalogRoutes, validateAgainst, type JsonSchema } from '@weft/contracts';
import { settingsViolations } from '../src/domain/process/settings-rules.js';

/**
 * A process may wait for weeks: the engine's timers step past setTimeout's 24.8-day limit, so the
 * time-out is capped at a year, not at 2^31-1 ms.
 */
describe('process timeout_seconds limit', () => {
  const createProcessBodySchema = catalogRoutes.find(
    (route) => route.method === 'POST' && route.path === '/api/v1/processes/by-org/:org_id',
  )!.bodySchema as JsonSchema;
  const DAY = 24 * 3600;

  test('a 40-day timeout is accepted by the request schema and the settings rules', () => {
    expect(validateAgainst(createProcessBodySchema, { name: 'p', timeout_seconds: 40 * DAY })).toEqual([]);
    expect(settingsViolations({ timeoutSeconds: 40 * DAY })).toEqual([]);
  });

  test('more than a year is refused by both', () => {
    expect(validateAgainst(createProcessBodySchema, { name: 'p', timeout_seconds: 367 * DAY })).toEqual([
      expect.objectContaining({ path: '/timeout_seconds' }),
    ]);
    expect(settingsViolations({ timeoutSeconds: 367 * DAY })).toEqual([
      { path: '/timeout_seconds', message: 'must be an integer from 0 to 31622400' },
    ]);
  });
});
