import { ArgumentMetadata, BadRequestException, Injectable, PipeTransform } from '@nestjs/common';
import { overlongList } from '../common/bounded-list';

/** Deeper input is refused before class-transformer walks it, whose recursion would exhaust the stack. */
export const MAX_INPUT_DEPTH = 32;

/** A UTF-16 high surrogate not followed by a low one, or a low one not preceded by a high one. */
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * What makes a string impossible to store as text, or null when it can be stored:
 * - the NUL character, which PostgreSQL cannot store in text or jsonb;
 * - a lone UTF-16 surrogate (JSON lets a client send `"\ud800"`), which is not Unicode text at all: jsonb
 *   refuses it, and text columns would silently store U+FFFD instead.
 */
export function unstorableText(text: string): string | null {
  if (text.includes('\u0000')) return 'the NUL character (\\u0000)';
  if (LONE_SURROGATE.test(text)) return 'a lone UTF-16 surrogate (\\ud800-\\udfff), which is not valid Unicode';
  return null;
}

/**
 * Checks of raw input that come before any transformation or validation, for every body, query and
 * path argument, naming where the problem is:
 * - a body's list longer than its documented cap (BoundedList), on its length alone;
 * - text that cannot be stored (unstorableText): the NUL character, a lone surrogate;
 * - nesting deeper than MAX_INPUT_DEPTH.
 */
@Injectable()
export class RawInputPipe implements PipeTransform {
  transform(value: unknown, metadata: ArgumentMetadata): unknown {
    if (metadata.type === 'custom') return value;
    // A list over its documented cap is refused on its length, before anything walks its items.
    const overlong = metadata.type === 'body' ? overlongList(value, metadata.metatype) : null;
    if (overlong) throw new BadRequestException(overlong);
    const problem = findRawInputProblem(value, metadata.data ?? '');
    if (problem) throw new BadRequestException(problem.replace(/^ /, metadata.type + ' '));
    return value;
  }
}

/** A message naming the first unstorable text or excess nesting in `value`, or null when it is clean. */
export function findRawInputProblem(value: unknown, path = '', depth = 0): string | null {
  if (typeof value === 'string') {
    const reason = unstorableText(value);
    return reason ? `${path} must not contain ${reason}` : null;
  }
  if (value === null || typeof value !== 'object') return null;
  if (depth >= MAX_INPUT_DEPTH) return `${path} nests deeper than ${MAX_INPUT_DEPTH} levels`;
  for (const [key, child] of Object.entries(value)) {
    const childPath = Array.isArray(value) ? `${path}[${key}]` : path ? `${path}.${key}` : key;
    const reason = unstorableText(key);
    if (reason) return `${printable(childPath)} (a key) must not contain ${reason}`;
    const found = findRawInputProblem(child, childPath, depth + 1);
    if (found !== null) return found;
  }
  return null;
}

/** A path that may itself hold the characters it complains about, made printable for the message. */
function printable(path: string): string {
  return path.replace(/[\u0000\ud800-\udfff]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
