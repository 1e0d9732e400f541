import { ArgumentMetadata, BadRequestException, Injectable, PipeTransform } from '@nestjs/common';

/** Deeper input is refused before class-transformer walks it, whose recursion would exhaust the stack. */
export const MAX_INPUT_DEPTH = 32;

/**
 * Checks of raw input that come before any transformation or validation, for every body, query and
 * path argument, naming where the problem is:
 * - the NUL character, which PostgreSQL cannot store in text or jsonb, so no string carrying it is valid;
 * - nesting deeper than MAX_INPUT_DEPTH.
 */
@Injectable()
export class RawInputPipe implements PipeTransform {
  transform(value: unknown, metadata: ArgumentMetadata): unknown {
    if (metadata.type === 'custom') return value;
    const problem = findRawInputProblem(value, metadata.data ?? '');
    if (problem) throw new BadRequestException(problem.replace(/^ /, metadata.type + ' '));
    return value;
  }
}

/** A message naming the first NUL character or excess nesting in `value`, or null when it is clean. */
export function findRawInputProblem(value: unknown, path = '', depth = 0): string | null {
  if (typeof value === 'string') return value.includes('\u0000') ? `${path} must not contain the NUL character (\\u0000)` : null;
  if (value === null || typeof value !== 'object') return null;
  if (depth >= MAX_INPUT_DEPTH) return `${path} nests deeper than ${MAX_INPUT_DEPTH} levels`;
  for (const [key, child] of Object.entries(value)) {
    const childPath = Array.isArray(value) ? `${path}[${key}]` : path ? `${path}.${key}` : key;
    if (key.includes('\u0000')) {
      return `${childPath.replace(/\u0000/g, '\\u0000')} (a key) must not contain the NUL character (\\u0000)`;
    }
    const found = findRawInputProblem(child, childPath, depth + 1);
    if (found !== null) return found;
  }
  return null;
}
