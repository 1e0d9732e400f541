import { ByteRange } from '../object-store/object-store';

export type RangeDecision = { kind: 'full' } | { kind: 'partial'; range: ByteRange } | { kind: 'unsatisfiable' };

/**
 * One `bytes=` range of RFC 9110 (first-last, first-, or -suffix). Anything else (several ranges, another
 * unit, bad syntax) is ignored and the whole file is served, which the RFC allows. An empty file has no
 * bytes to select, so it is served whole too.
 */
export function decideRange(header: string | undefined, size: number): RangeDecision {
  if (header === undefined || size === 0) return { kind: 'full' };
  const match = /^bytes=\s*(\d*)\s*-\s*(\d*)\s*$/i.exec(header.trim());
  if (!match) return { kind: 'full' };
  const [, first, last] = match;
  if (first === '' && last === '') return { kind: 'full' };
  if (first === '') {
    const suffix = Number(last);
    if (suffix === 0) return { kind: 'unsatisfiable' };
    return { kind: 'partial', range: { start: Math.max(0, size - suffix), end: size - 1 } };
  }
  const start = Number(first);
  if (start >= size) return { kind: 'unsatisfiable' };
  const end = last === '' ? size - 1 : Math.min(Number(last), size - 1);
  if (end < start) return { kind: 'full' }; // first > last is invalid syntax: ignore the header
  return { kind: 'partial', range: { start, end } };
}

/** If-Range needs a strong match; a date or a weak tag never matches, so the whole file is sent. */
export function ifRangeAllowsRange(header: string | undefined, etag: string): boolean {
  return header === undefined || header.trim() === etag;
}
