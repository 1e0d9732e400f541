import { ArgumentMetadata, BadRequestException, Injectable, PipeTransform } from '@nestjs/common';

/**
 * PostgreSQL cannot store the NUL character in text or jsonb, so a string carrying one can never be valid
 * here. Checked once for every body, query and path argument, ahead of validation, naming where it was.
 */
@Injectable()
export class NulCharacterPipe implements PipeTransform {
  transform(value: unknown, metadata: ArgumentMetadata): unknown {
    if (metadata.type === 'custom') return value;
    const path = findNul(value, metadata.data ?? '');
    if (path !== null) {
      throw new BadRequestException(`${path || metadata.type} must not contain the NUL character (\\u0000)`);
    }
    return value;
  }
}

/** The path of the first string or object key that holds a NUL character, or null. */
export function findNul(value: unknown, path = ''): string | null {
  if (typeof value === 'string') return value.includes('\u0000') ? path : null;
  if (value === null || typeof value !== 'object') return null;
  for (const [key, child] of Object.entries(value)) {
    const childPath = Array.isArray(value) ? `${path}[${key}]` : path ? `${path}.${key}` : key;
    if (key.includes('\u0000')) return `${childPath.replace(/\u0000/g, '\\u0000')} (a key)`;
    const found = findNul(child, childPath);
    if (found !== null) return found;
  }
  return null;
}
