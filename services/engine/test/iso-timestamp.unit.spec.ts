import { isoTimestamp } from '../src/projections/iso-timestamp.js';

describe('isoTimestamp', () => {
  it('answers every form of a timestamp column in the API form', () => {
    const at = '2026-11-29T21:04:01.123Z';
    expect(isoTimestamp(at)).toBe(at);
    expect(isoTimestamp(new Date(at))).toBe(at);
    expect(isoTimestamp('2026-11-29T22:04:01.123+01:00')).toBe(at);
    expect(isoTimestamp('2026-11-29 21:04:01.123+00')).toBe(at);
    expect(isoTimestamp('2026-11-29T21:04:01Z')).toBe('2026-11-29T21:04:01.000Z');
    expect(isoTimestamp(Date.parse(at))).toBe(at);
    expect([isoTimestamp(null), isoTimestamp(undefined)]).toEqual([null, null]);
  });
});
