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
