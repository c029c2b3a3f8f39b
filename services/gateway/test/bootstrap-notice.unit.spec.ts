import { bootstrapKeyNotice } from '../src/application/bootstrap-notice.js';

describe('what a start prints about a generated system key', () => {
  const generated = {
    generatedKey: 'weft_0123456789abcdefghijklmnopqrstuvwxyzABCDEFG',
    keyFile: '/data/bootstrap-api-key',
  };

  test('where output is collected as logs: the file, never the key', () => {
    const notice = bootstrapKeyNotice(generated, { showKey: false });
    expect(notice).toContain('/data/bootstrap-api-key');
    expect(notice).not.toContain(generated.generatedKey);
  });

  test('an embedded start shows it once, with the file', () => {
    const notice = bootstrapKeyNotice(generated, { showKey: true });
    expect(notice).toContain(generated.generatedKey);
    expect(notice).toContain('/data/bootstrap-api-key');
  });

  test('nothing when no key was generated', () => {
    expect(bootstrapKeyNotice({}, { showKey: true })).toBeUndefined();
  });
});
