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

/** The Content-Disposition header of a CDN answer, or null to leave it out (inline is the default). */
export function contentDisposition(contentType: string): string | null {
  return servedInline(contentType) ? null : 'attachment';
}
