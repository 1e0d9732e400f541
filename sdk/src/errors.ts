/**
 * What went wrong, as the `error` event and a rejected `ready()` report it.
 *
 * - `unauthorized` (401) and `forbidden` (403): the key is wrong, revoked or lacks FLAGS_READ. The client stops
 *   for good: no further request, polling and stream alike.
 * - `rate-limited` (429): no request is sent before `retryAfterSeconds` have passed.
 * - `server` (5xx), `http` (any other unexpected status), `network`, `timeout`, `invalid-payload`: the client
 *   keeps the last good payload and retries with exponential backoff.
 * - `stream`: the change stream dropped or was refused; the client polls until it reconnects.
 * - `cache`: the cache file could not be read or written; everything else goes on.
 * - `closed`: `close()` was called before `ready()` settled.
 */
export type FlagstoreErrorKind =
  'unauthorized' | 'forbidden' | 'rate-limited' | 'server' | 'http' | 'network' | 'timeout' | 'invalid-payload' | 'stream' | 'cache' | 'closed';

export class FlagstoreError extends Error {
  override readonly name = 'FlagstoreError';
  readonly kind: FlagstoreErrorKind;
  /** The HTTP status the service answered, when it answered. */
  readonly status: number | undefined;
  /** From `Retry-After` on a 429. */
  readonly retryAfterSeconds: number | undefined;

  constructor(kind: FlagstoreErrorKind, message: string, details: { status?: number; retryAfterSeconds?: number; cause?: unknown } = {}) {
    super(message, details.cause === undefined ? undefined : { cause: details.cause });
    this.kind = kind;
    this.status = details.status;
    this.retryAfterSeconds = details.retryAfterSeconds;
  }

  /** 401 and 403: retrying cannot help, so the client stops. */
  get isFatal(): boolean {
    return this.kind === 'unauthorized' || this.kind === 'forbidden';
  }
}

/** The error for an HTTP answer that is not the one expected; `body` is the service's `{statusCode, error, message}`. */
export function httpError(what: string, status: number, body: string, retryAfterSeconds?: number): FlagstoreError {
  const message = `${what} answered ${status}${serviceMessage(body)}`;
  if (status === 401) return new FlagstoreError('unauthorized', message, { status });
  if (status === 403) return new FlagstoreError('forbidden', message, { status });
  if (status === 429) return new FlagstoreError('rate-limited', message, { status, retryAfterSeconds });
  if (status >= 500) return new FlagstoreError('server', message, { status });
  return new FlagstoreError('http', message, { status });
}

function serviceMessage(body: string): string {
  try {
    const parsed: unknown = JSON.parse(body);
    if (typeof parsed === 'object' && parsed !== null && 'message' in parsed) {
      const { message } = parsed as { message: unknown };
      if (typeof message === 'string') return `: ${message}`;
      if (Array.isArray(message)) return `: ${message.join('; ')}`;
    }
  } catch {
    // Not the service's JSON (a proxy's HTML page, say): the status says enough.
  }
  return '';
}
