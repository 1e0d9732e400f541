import { unstorableText } from '../../http/raw-input.pipe';
import { StorageMetadata } from './storage-item';

export const METADATA_MAX_KEYS = 10;
export const METADATA_MAX_KEY_LENGTH = 128;
export const METADATA_MAX_STRING_LENGTH = 512;
export const METADATA_MAX_BYTES = 2048;
const KEY_NAME = /^[A-Za-z0-9_-]+$/;

export type MetadataResult = { ok: true; metadata: StorageMetadata } | { ok: false; message: string };

/**
 * Parses the JSON-encoded metadata of a signed-URL request or a multipart upload and checks its rules: an
 * object of at most 10 keys (1-128 letters, digits, `_`, `-`) whose values are strings (up to 512
 * characters), finite numbers or booleans, at most 2048 bytes as compact JSON. The message of a failure
 * names the rule broken, for a 400 VALIDATION_ERROR.
 */
export function parseMetadata(raw: string): MetadataResult {
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return { ok: false, message: 'metadata must be a JSON-encoded object' };
  }
  return validateMetadata(value);
}

export function validateMetadata(value: unknown): MetadataResult {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, message: 'metadata must be a JSON-encoded object' };
  }
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length > METADATA_MAX_KEYS) {
    return { ok: false, message: `metadata must have at most ${METADATA_MAX_KEYS} keys (got ${entries.length})` };
  }
  for (const [key, item] of entries) {
    if (key.length === 0 || key.length > METADATA_MAX_KEY_LENGTH) {
      return {
        ok: false,
        message: `metadata key names must be 1-${METADATA_MAX_KEY_LENGTH} characters long ("${truncate(key)}")`,
      };
    }
    if (!KEY_NAME.test(key)) {
      return {
        ok: false,
        message: `metadata key names may only contain letters, digits, underscores and hyphens ("${truncate(key)}")`,
      };
    }
    if (typeof item === 'string') {
      // Stored in jsonb: the same text rules as every other input (no NUL, no lone surrogate).
      const reason = unstorableText(item);
      if (reason) return { ok: false, message: `metadata string values must not contain ${reason} ("${key}")` };
      if (item.length > METADATA_MAX_STRING_LENGTH) {
        return {
          ok: false,
          message: `metadata string values must be at most ${METADATA_MAX_STRING_LENGTH} characters ("${key}")`,
        };
      }
    } else if (typeof item === 'number') {
      if (!Number.isFinite(item)) return { ok: false, message: `metadata number values must be finite ("${key}")` };
    } else if (typeof item !== 'boolean') {
      return { ok: false, message: `metadata values must be a string, number or boolean ("${key}")` };
    }
  }
  const bytes = Buffer.byteLength(JSON.stringify(value), 'utf8');
  if (bytes > METADATA_MAX_BYTES) {
    return { ok: false, message: `metadata must be at most ${METADATA_MAX_BYTES} bytes in total (got ${bytes})` };
  }
  return { ok: true, metadata: value as StorageMetadata };
}

function truncate(key: string): string {
  return key.length > 40 ? `${key.slice(0, 40)}...` : key;
}
