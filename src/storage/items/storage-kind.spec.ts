import { kindOfContentType, normalizeContentType, StorageKind } from './storage-kind';

describe('kind from content type', () => {
  it.each([
    ['image/png', StorageKind.IMAGE],
    ['IMAGE/JPEG', StorageKind.IMAGE],
    ['image/svg+xml', StorageKind.IMAGE],
    ['video/mp4', StorageKind.VIDEO],
    ['audio/ogg', StorageKind.AUDIO],
    ['application/pdf', StorageKind.DOCUMENT],
    ['text/plain;charset=utf-8', StorageKind.DOCUMENT],
    ['application/octet-stream', StorageKind.DOCUMENT],
    ['imagex/png', StorageKind.DOCUMENT],
  ])('%s is %s', (contentType, kind) => {
    expect(kindOfContentType(contentType)).toBe(kind);
  });
});

describe('normalizeContentType', () => {
  it('lower-cases the type and parameter names and removes spaces', () => {
    expect(normalizeContentType(' Image/PNG ')).toBe('image/png');
    expect(normalizeContentType('text/plain; Charset=UTF-8')).toBe('text/plain;charset=UTF-8');
  });

  it('rejects what is not a media type', () => {
    for (const value of [undefined, '', 'png', 'image/', '/png', 'image/png/x', 'image png', 'a/b; c', 'x'.repeat(250) + '/abcdefg']) {
      expect(normalizeContentType(value)).toBeNull();
    }
  });
});
