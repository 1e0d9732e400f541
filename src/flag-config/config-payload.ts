import { createHash } from 'node:crypto';
import { canonicalJson } from '../common/canonical-json';
import { ConfigEntry } from '../flags/flags.repository';

export const POLL_INTERVAL_SECONDS = 20;
export const CONFIG_CACHE_CONTROL = 'no-cache, must-revalidate';

/** A built config payload: the exact bytes served with 200, and its validator. */
export interface ConfigPayload {
  /** The hash, as it appears in the body (no W/ prefix, no quotes). */
  etag: string;
  /** The ETag header value: `W/"<hash>"`. */
  etagHeader: string;
  body: Buffer;
  builtAt: number;
  /** The flags the payload serves, by key order; read by OFREP (`ofrep/ofrep-evaluation.ts`). */
  entries: readonly ConfigEntry[];
  /** Whether any flag has rules: OFREP then evaluates per request, by context. */
  targeted: boolean;
}

/** An entry as the payload serves it: `rules` only when the flag has any, so flags without rules read as the spec lists them. */
function served({ key, type, value, runtime, rules }: ConfigEntry): ConfigEntry {
  return rules ? { key, type, value, runtime, rules } : { key, type, value, runtime };
}

/**
 * The ETag is a hash of the canonical form of the flags alone (never of generatedAt), so the same set of
 * flags gives the same value on every instance and after every restart. It covers their rules: a rules-only edit
 * changes it.
 */
export function configEtag(entries: readonly ConfigEntry[]): string {
  const canonical = canonicalJson(entries.map(served));
  return createHash('sha256').update(canonical).digest('base64url').slice(0, 32);
}

/** `now` (the app's clock) is generatedAt, and when the payload was built (its age in FlagConfigCache). */
export function buildConfigPayload(entries: readonly ConfigEntry[], now: Date): ConfigPayload {
  const etag = configEtag(entries);
  const body = Buffer.from(
    JSON.stringify({
      etag,
      generatedAt: now.toISOString(),
      pollIntervalSeconds: POLL_INTERVAL_SECONDS,
      flags: entries.map(served),
    }),
  );
  return { etag, etagHeader: `W/"${etag}"`, body, builtAt: now.getTime(), entries, targeted: entries.some((entry) => entry.rules !== undefined) };
}
