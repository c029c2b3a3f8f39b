import { blobKeyOf, blobUrlOf, filesUrlOf, InvalidBlobKeyError } from '../src/index.js';

describe('files URL (/api/v1/files/<key>)', () => {
  it('names the same blob as the weft-blob URL of its key', () => {
    const key = 'org-1/triggers/p-1/n-1/report 2026%.pdf';
    expect(filesUrlOf(key)).toBe('/api/v1/files/org-1/triggers/p-1/n-1/report%202026%25.pdf');
    expect(blobKeyOf(filesUrlOf(key))).toBe(key);
    expect(blobKeyOf(blobUrlOf(key))).toBe(key);
    expect(blobKeyOf({ name: 'x', url: filesUrlOf(key), size: 1, contentType: 'application/pdf' })).toBe(key);
  });

  it('refuses an encoded slash or a dot segment', () => {
    expect(() => blobKeyOf('/api/v1/files/org-1%2F..%2Fother/x')).toThrow(InvalidBlobKeyError);
    expect(() => blobKeyOf('/api/v1/files/org-1/../other/x')).toThrow(InvalidBlobKeyError);
  });
});
