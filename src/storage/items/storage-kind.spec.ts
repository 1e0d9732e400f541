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

  it('keeps quoted parameter values as they are, a ";" inside one included', () => {
    expect(normalizeContentType('text/plain; Charset="UTF-8"')).toBe('text/plain;charset="UTF-8"');
    expect(normalizeContentType('multipart/mixed; boundary="a;b=c"; X=1')).toBe('multipart/mixed;boundary="a;b=c";x=1');
    expect(normalizeContentType('application/x; q="!#$%&\'()*+,-./:;<=>?@[]^_`{|}~"')).toBe('application/x;q="!#$%&\'()*+,-./:;<=>?@[]^_`{|}~"');
  });

  it.each([
    ['a control character', 'text/plain; charset="utf\u00018"'],
    ['a tab', 'text/plain; charset="utf\t8"'],
    ['a line break', 'text/plain; charset="utf\n8"'],
    ['a NUL', 'text/plain; charset="utf\u00008"'],
    ['DEL', 'text/plain; charset="utf\u007f8"'],
    ['a space', 'text/plain; charset="utf 8"'],
    ['a non-ASCII letter', 'text/plain; charset="utf\u00e98"'],
    ['a backslash', 'text/plain; charset="utf\\8"'],
  ])('refuses %s inside a quoted parameter value (visible ASCII only)', (_name, value) => {
    expect(normalizeContentType(value)).toBeNull();
  });

  it('refuses whitespace other than space and tab around ";"', () => {
    expect(normalizeContentType('text/plain;\ncharset=utf-8')).toBeNull();
    expect(normalizeContentType('text/plain;\u00a0charset=utf-8')).toBeNull();
    expect(normalizeContentType('text/plain ;\tcharset=utf-8')).toBe('text/plain;charset=utf-8');
  });

  it('rejects what is not a media type', () => {
    for (const value of [undefined, '', 'png', 'image/', '/png', 'image/png/x', 'image png', 'a/b; c', 'x'.repeat(250) + '/abcdefg']) {
      expect(normalizeContentType(value)).toBeNull();
    }
  });
});
