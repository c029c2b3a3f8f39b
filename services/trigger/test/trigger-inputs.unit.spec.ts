import { triggerConfigViolations, triggerConnectionNeeds } from '@weft/contracts';
import { firingExecutionId } from '../src/domain/execution-id.js';
import { isoInZone } from '../src/domain/schedule/cron-schedule.js';
import { webhookPayload } from '../src/domain/webhook-payload.js';

/** The pure parts of the triggers: config checks, firing ids, webhook payloads, zoned times. */
describe('trigger inputs', () => {
  test('schedule configs: 5 valid cron fields, an IANA zone, an object body', () => {
    expect(
      triggerConfigViolations({ triggerType: 'schedule', cronExpression: '0 9 * * 1-5', timezone: 'Europe/Berlin' }),
    ).toEqual([]);
    const paths = (config: Record<string, unknown>) => triggerConfigViolations(config).map((v) => v.path);
    expect(paths({ triggerType: 'schedule', cronExpression: '0 9 * * * *' })).toEqual(['/config/cronExpression']);
    expect(paths({ triggerType: 'schedule', cronExpression: '0 25 * * *' })).toEqual(['/config/cronExpression']);
    expect(paths({ triggerType: 'schedule', cronExpression: '@daily' })).toEqual(['/config/cronExpression']);
    expect(paths({ triggerType: 'schedule', cronExpression: '* * * * *', timezone: 'CET+1', body: [] })).toEqual([
      '/config/timezone',
      '/config/body',
    ]);
  });

  test('mail configs: interval, auth fields per provider, and the connection each names', () => {
    const gmail = {
      triggerType: 'gmail',
      authMethod: 'service_account',
      serviceAccountId: 'sa',
      impersonationEmail: 'a@b.test',
    };
    expect(triggerConfigViolations(gmail)).toEqual([]);
    expect(triggerConnectionNeeds(gmail)).toEqual([
      { field: 'serviceAccountId', connectionId: 'sa', types: ['google-service-account'] },
    ]);
    expect(
      triggerConfigViolations({ triggerType: 'outlook', authMethod: 'service_account' }).map((v) => v.path),
    ).toEqual(['/config/authMethod']);
    expect(
      triggerConfigViolations({
        triggerType: 'outlook',
        connectionId: 'c',
        pollingInterval: 0,
        folders: ['Inbox', 3],
      }).map((v) => v.path),
    ).toEqual(['/config/pollingInterval', '/config/folders']);
    expect(triggerConnectionNeeds({ triggerType: 'outlook', connectionId: 'c' })).toEqual([
      { field: 'connectionId', connectionId: 'c', types: ['outlook-oauth'] },
    ]);
  });

  test('a firing id is the same for the same process, node and key, and differs otherwise', () => {
    const id = firingExecutionId('p', 'n', 'k');
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(firingExecutionId('p', 'n', 'k')).toBe(id);
    expect(
      new Set([
        firingExecutionId('p', 'n', 'k2'),
        firingExecutionId('p', 'n2', 'k'),
        firingExecutionId('p2', 'n', 'k'),
      ]).has(id),
    ).toBe(false);
  });

  test('webhook payloads by content type', () => {
    expect(webhookPayload('application/json; charset=utf-8', { a: 1 })).toEqual({ a: 1 });
    expect(webhookPayload(undefined, undefined)).toEqual({});
    expect(webhookPayload('text/plain', 'hi')).toEqual({ text: 'hi' });
    expect(
      webhookPayload('multipart/form-data; boundary=x', {
        fields: { tag: ['a', 'b'] },
        files: [
          { field: 'doc', name: '1.pdf', url: 'weft-blob://k1', size: 1, contentType: 'application/pdf' },
          { field: 'doc', name: '2.pdf', url: 'weft-blob://k2', size: 2, contentType: 'application/pdf' },
        ],
      }),
    ).toEqual({
      tag: ['a', 'b'],
      doc: [
        { name: '1.pdf', url: 'weft-blob://k1', size: 1, contentType: 'application/pdf' },
        { name: '2.pdf', url: 'weft-blob://k2', size: 2, contentType: 'application/pdf' },
      ],
    });
    expect(() => webhookPayload('application/xml', '<a/>')).toThrow(expect.objectContaining({ status: 415 }));
    expect(() => webhookPayload('text/plain', 'a\u0000b')).toThrow(expect.objectContaining({ status: 400 }));
  });

  test('zoned times carry the offset of that instant', () => {
    expect(isoInZone(new Date('2026-01-15T12:00:00Z'), 'Europe/Berlin')).toBe('2026-01-15T13:00:00.000+01:00');
    expect(isoInZone(new Date('2026-07-15T12:00:00Z'), 'Europe/Berlin')).toBe('2026-07-15T14:00:00.000+02:00');
    expect(isoInZone(new Date('2026-07-15T12:00:00.250Z'), 'UTC')).toBe('2026-07-15T12:00:00.250+00:00');
    expect(isoInZone(new Date('2026-07-15T12:00:00Z'), 'Asia/Kolkata')).toBe('2026-07-15T17:30:00.000+05:30');
  });
});
