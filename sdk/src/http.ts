import { FlagstoreError } from './errors';

/** The part of `fetch` the client uses; Node 20's global fetch by default. */
export type Fetch = (url: string, init: RequestInit) => Promise<Response>;

/**
 * Settles with `work`, or rejects with the controller's reason once it aborts: after `timeoutMs` (a service that
 * accepted the connection and never answers), or when the client closes. It rejects even if an injected fetch
 * ignores its signal. The timer is the process's own, unref'd: a watchdog, not a wait the client chooses.
 */
export function withDeadline<T>(work: Promise<T>, controller: AbortController, timeoutMs: number, what: string): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const { signal } = controller;
    const onAbort = () => reject(signal.reason);
    const timer = setTimeout(() => controller.abort(new FlagstoreError('timeout', `${what} took longer than ${timeoutMs} ms`)), timeoutMs);
    timer.unref();
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
    });
  });
}

/** A failure that is not an HTTP answer (refused connection, DNS, reset, a throwing fetch) as the client reports it. */
export function asFlagstoreError(error: unknown, what: string): FlagstoreError {
  if (error instanceof FlagstoreError) return error;
  return new FlagstoreError('network', `${what} failed: ${describe(error)}`, { cause: error });
}

/**
 * undici says only "fetch failed"; the reason (ECONNREFUSED 127.0.0.1:3000, say) is in its cause, which for a host
 * with several addresses is an AggregateError without a message but with a code. Errors are read by shape, not
 * instanceof: fetch's may come from another realm.
 */
function describe(error: unknown): string {
  const { message, cause } = (typeof error === 'object' && error !== null ? error : {}) as { message?: unknown; cause?: unknown };
  if (typeof message !== 'string') return String(error);
  const { message: causeMessage, code } = (typeof cause === 'object' && cause !== null ? cause : {}) as { message?: unknown; code?: unknown };
  const reason = typeof causeMessage === 'string' && causeMessage !== '' ? causeMessage : typeof code === 'string' ? code : undefined;
  return reason === undefined ? message : `${message} (${reason})`;
}

export function bearer(apiKey: string): Record<string, string> {
  return { Authorization: `Bearer ${apiKey}` };
}
