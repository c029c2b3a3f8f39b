import { jsonRecordsetFor } from '../src/index.js';

describe('jsonRecordsetFor', () => {
  it('reads a batch as jsonb up to 32 MiB of JSON text, as json beyond (a jsonb value holds at most 255 MB)', () => {
    expect(jsonRecordsetFor('[]')).toEqual({ fn: 'jsonb_to_recordset', type: 'jsonb' });
    expect(jsonRecordsetFor('x'.repeat(32 * 1024 * 1024))).toEqual({ fn: 'jsonb_to_recordset', type: 'jsonb' });
    expect(jsonRecordsetFor('x'.repeat(32 * 1024 * 1024 + 1))).toEqual({ fn: 'json_to_recordset', type: 'json' });
  });
});
