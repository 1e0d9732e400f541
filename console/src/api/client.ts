import createClient, { type Middleware } from 'openapi-fetch';
import type { components, paths } from '../../.generated/api';

/** What the service answered when it refused a request: enough to show beside the control that caused it. */
export class ApiProblem extends Error {
  constructor(
    readonly status: number,
    /** The stable code (`FLAG_KEY_TAKEN`, `VALIDATION_ERROR`, ...), or `NETWORK` when nothing answered. */
    readonly code: string,
    message: string,
    /** Seconds to wait, from a 429's Retry-After. */
    readonly retryAfterSeconds?: number,
    /** The whole body of the refusal, for the answers that say more than a message (a 409's `stale` flags). */
    readonly body?: unknown,
  ) {
    super(message);
  }

  /** The form field a validation message is about: its first word (`key must match …`, `rules[0].id must …`). */
  field(): string | undefined {
    if (this.code === 'FLAG_KEY_TAKEN') return 'key';
    const match = /^(?:property )?([A-Za-z]+)/.exec(this.message);
    return this.status === 400 && match ? match[1] : undefined;
  }

  /** The sentence a person reads: a 429 says when to try again; a 412 that somebody else changed the flag first. */
  explain(): string {
    if (this.status === 429) return `Too many requests: try again in ${this.retryAfterSeconds ?? 60} s.`;
    if (this.code === 'REVIEW_REQUIRED') {
      return 'Not saved: this organization requires review, so flag changes go through change requests (the flag page’s “Request review”).';
    }
    if (this.code === 'FLAG_CHANGED') {
      return 'Not saved: someone else changed this flag after you opened it, and saving would have overwritten their change. Show the latest, then make your change again.';
    }
    return this.message;
  }
}

/** The session's state the API needs on every request: the organization and, for changes, the CSRF token. */
interface Credentials {
  organizationId?: string;
  csrfToken?: string;
}

const credentials: Credentials = {};
let onSignedOut: (() => void) | undefined;

/** Kept in memory only (never in storage): the token that must accompany every change made with the cookie. */
export function setCredentials(next: Credentials): void {
  credentials.organizationId = next.organizationId;
  credentials.csrfToken = next.csrfToken;
}

/** Called when the service answers 401: the session ended (signed out elsewhere, expired). */
export function whenSignedOut(listener: () => void): void {
  onSignedOut = listener;
}

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

const session: Middleware = {
  onRequest({ request }) {
    // A call may name another of the person's organizations itself (the promotion page reads two at once).
    if (credentials.organizationId && !request.headers.has('X-Organization-Id')) request.headers.set('X-Organization-Id', credentials.organizationId);
    if (credentials.csrfToken && UNSAFE.has(request.method)) request.headers.set('X-CSRF-Token', credentials.csrfToken);
    return request;
  },
};

/** The API, typed by the service's own OpenAPI document, with the session's cookie and headers. */
export const api = createClient<paths>({ baseUrl: '', credentials: 'same-origin' });
api.use(session);

interface Answer<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/** The data of a successful answer, or an ApiProblem (a 401 also returns the person to sign-in). */
export async function ok<T>(call: Promise<Answer<T>>, options: { signInOn401?: boolean } = {}): Promise<T> {
  let answer: Answer<T>;
  try {
    answer = await call;
  } catch (error) {
    throw new ApiProblem(0, 'NETWORK', `The service did not answer (${(error as Error).message}). Check your connection and try again.`);
  }
  const { data, error, response } = answer;
  if (response.ok) return data as T;
  const body = (error ?? {}) as { error?: string | { code?: string; message?: string }; message?: string | string[] };
  const nested = typeof body.error === 'object' ? body.error : undefined;
  const code = nested?.code ?? (typeof body.error === 'string' ? body.error : `HTTP_${response.status}`);
  const message = nested?.message ?? (Array.isArray(body.message) ? body.message.join('; ') : body.message) ?? response.statusText;
  const retryAfter = Number(response.headers.get('Retry-After'));
  const problem = new ApiProblem(response.status, code, message, Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter : undefined, error);
  if (response.status === 401 && options.signInOn401 !== false) onSignedOut?.();
  throw problem;
}

/** An answer about one flag, with the flag's ETag (its version), which the next write sends back as If-Match. */
export interface Versioned<T> {
  data: T;
  etag: string;
}

/** As `ok`, with the answer's ETag. */
export async function okVersioned<T>(call: Promise<Answer<T>>): Promise<Versioned<T>> {
  let response: Response | undefined;
  const data = await ok(
    call.then((answer) => {
      response = answer.response;
      return answer;
    }),
  );
  return { data, etag: response?.headers.get('ETag') ?? '' };
}

/** The version an ETag such as `"3"` names (0 for none): a flag's versions only grow. */
export function versionOf(etag: string): number {
  const version = Number(/^"(\d+)"$/.exec(etag)?.[1]);
  return Number.isFinite(version) ? version : 0;
}

/**
 * A flag page's way to write its flag: `send` is given the version the page shows (for If-Match), and the page then
 * shows what the service answered.
 */
export type FlagWrite = (
  send: (etag: string) => Promise<Versioned<components['schemas']['FeatureFlagDto']>>,
) => Promise<components['schemas']['FeatureFlagDto']>;
