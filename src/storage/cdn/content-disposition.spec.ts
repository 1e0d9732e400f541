import { contentDisposition, servedInline } from './content-disposition';

describe('CDN Content-Disposition', () => {
  it.each(['image/png', 'image/jpeg', 'image/webp', 'IMAGE/GIF', 'audio/ogg', 'video/mp4', 'video/webm;codecs="vp9"'])(
    'serves %s inline',
    (contentType) => {
      expect(servedInline(contentType)).toBe(true);
      expect(contentDisposition(contentType)).toBeNull();
    },
  );

  it.each([
    'text/html',
    'text/html;charset=utf-8',
    'image/svg+xml',
    'IMAGE/SVG+XML;charset=utf-8',
    'image/xml',
    'video/x-something+xml',
    'application/xhtml+xml',
    'text/xml',
    'application/pdf',
    'application/javascript',
    'text/plain',
    'application/octet-stream',
    'imagex/png',
  ])('serves %s as an attachment', (contentType) => {
    expect(servedInline(contentType)).toBe(false);
    expect(contentDisposition(contentType)).toBe('attachment');
  });
});

describe('CDN Content-Disposition of a named file (RFC 6266)', () => {
  it('names an ASCII file in both parameters, inline for media and as an attachment otherwise', () => {
    expect(contentDisposition('image/png', 'level 3.png')).toBe(`inline; filename="level 3.png"; filename*=UTF-8''level%203.png`);
    expect(contentDisposition('application/pdf', 'notes.pdf')).toBe(`attachment; filename="notes.pdf"; filename*=UTF-8''notes.pdf`);
  });

  it('gives a non-ASCII name in UTF-8 as filename*, and a safe ASCII fallback', () => {
    expect(contentDisposition('text/plain', 'Übersicht – März 夜.txt')).toBe(
      `attachment; filename="Ubersicht _ Marz _.txt"; filename*=UTF-8''${encodeURIComponent('Übersicht – März 夜.txt')}`,
    );
    expect(decodeURIComponent(contentDisposition('image/png', '🎮.png')!.split("UTF-8''")[1])).toBe('🎮.png');
  });

  it('keeps quotes, backslash-like and percent signs out of the fallback, and escapes what RFC 8187 does not allow raw', () => {
    expect(contentDisposition('text/plain', `a"b%20c'(d)*.txt`)).toBe(
      `attachment; filename="a_b_20c'(d)*.txt"; filename*=UTF-8''a%22b%2520c%27%28d%29%2A.txt`,
    );
  });
});
