/**
 * Whether an If-None-Match header matches an entity tag, by weak comparison (RFC 9110 13.1.2), as
 * If-None-Match requires: `*`, or any listed validator in the forms `W/"t"`, `"t"` or a bare `t`.
 * `opaqueTag` is the tag itself, without `W/` or quotes.
 */
export function ifNoneMatchMatches(header: string | undefined, opaqueTag: string): boolean {
  if (!header) return false;
  for (const candidate of header.split(',')) {
    let tag = candidate.trim();
    if (tag === '*') return true;
    if (tag.startsWith('W/')) tag = tag.slice(2);
    if (tag.length >= 2 && tag.startsWith('"') && tag.endsWith('"')) tag = tag.slice(1, -1);
    if (tag === opaqueTag) return true;
  }
  return false;
}
