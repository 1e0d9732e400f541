/**
 * How the CDN presents a file: `inline` for passive media, `attachment` (a download, never a page) for
 * everything else.
 *
 * The CDN serves "anything that is not an image, audio or video" as an attachment (README, "Storage"), and reads kinds from
 * the type (`image/*` is an image). SVG is `image/svg+xml` but it is active content: an SVG opened as a
 * document runs its scripts and can embed HTML, which is exactly the inline-HTML problem. So "media" here is
 * `image/*`, `audio/*` and `video/*` minus XML-based types (`+xml` suffix, or plain `xml`): a browser renders
 * those as documents, not as pixels or sound. The kind shown by the API is unchanged (SVG stays an image).
 */
export function servedInline(contentType: string): boolean {
  const essence = contentType.split(';', 1)[0].trim().toLowerCase();
  const slash = essence.indexOf('/');
  const type = essence.slice(0, slash);
  const subtype = essence.slice(slash + 1);
  if (slash < 0 || !['image', 'audio', 'video'].includes(type)) return false;
  return subtype !== 'xml' && !subtype.endsWith('+xml');
}

/**
 * The Content-Disposition header of a CDN answer, or null to leave it out (inline is the default and the file has
 * no name). A named file (decisions.md, "File names") is offered under its name as RFC 6266 says: `filename*` in
 * UTF-8 (RFC 8187) for every browser of the last decade, after a `filename` fallback in safe ASCII for older ones.
 */
export function contentDisposition(contentType: string, fileName: string | null = null): string | null {
  const type = servedInline(contentType) ? 'inline' : 'attachment';
  if (fileName === null) return type === 'inline' ? null : type;
  return `${type}; filename="${asciiFallback(fileName)}"; filename*=UTF-8''${extendedValue(fileName)}`;
}

/**
 * The name in printable ASCII for a quoted-string: accents dropped (`é` is `e`), anything else `_`, and so are `"`
 * and `\` (quoting rules differ between browsers) and `%` (some decode it, RFC 6266 appendix D).
 */
function asciiFallback(fileName: string): string {
  return [...fileName.normalize('NFD').replace(/[\u0300-\u036f]/g, '')]
    .map((char) => (/^[\x20-\x7e]$/.test(char) && !'"\\%'.includes(char) ? char : '_'))
    .join('');
}

/** RFC 8187's value-chars: attr-chars as they are, every other UTF-8 byte percent-encoded. */
function extendedValue(fileName: string): string {
  return encodeURIComponent(fileName).replace(/['()*]/g, (char) => `%${char.charCodeAt(0).toString(16).toUpperCase()}`);
}
