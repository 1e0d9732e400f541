import type { Fetch } from '../../src';

export interface RecordedRequest {
  /** The path after the host: `/v1/flags/config` or `/v1/flags/config/stream`. */
  path: string;
  /** Request headers, names in lower case. */
  headers: Record<string, string>;
  /** The status answered, once answered. */
  status?: number;
  /** What the fetch threw instead. */
  error?: unknown;
}

/** Answers a request instead of the service; `undefined` lets it through to the real one. */
export type Interceptor = (path: string, init: RequestInit) => Promise<Response> | Response | undefined;

/**
 * The client's fetch, recorded: every request it sends, with its headers and what came back. By default each goes
 * to the real service; `intercept()` stands in for the network's failures (a refused connection, a proxy's 503)
 * where the real service cannot be made to fail on cue.
 */
export class RecordingFetch {
  readonly requests: RecordedRequest[] = [];
  private interceptor: Interceptor | undefined;

  readonly fetch: Fetch = async (url, init) => {
    const record: RecordedRequest = { path: new URL(url).pathname, headers: lowerCase(init.headers) };
    this.requests.push(record);
    try {
      const response = (await this.interceptor?.(record.path, init)) ?? (await globalThis.fetch(url, init));
      record.status = response.status;
      return response;
    } catch (error) {
      record.error = error;
      throw error;
    }
  };

  intercept(interceptor: Interceptor | undefined): void {
    this.interceptor = interceptor;
  }

  /** Every request fails as undici fails one whose connection is refused. */
  down(): void {
    this.intercept(() => {
      const cause = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' });
      throw new TypeError('fetch failed', { cause });
    });
  }

  up(): void {
    this.intercept(undefined);
  }

  /** Config requests only (the stream's are left out). */
  get polls(): RecordedRequest[] {
    return this.requests.filter((request) => request.path.endsWith('/flags/config'));
  }

  get streams(): RecordedRequest[] {
    return this.requests.filter((request) => request.path.endsWith('/flags/config/stream'));
  }
}

/** An error answer in the service's shape. */
export function errorResponse(status: number, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify({ statusCode: status, error: 'Stand-in', message: `stand-in ${status}` }), {
    status,
    headers: { 'Content-Type': 'application/json', ...headers },
  });
}

function lowerCase(headers: RequestInit['headers']): Record<string, string> {
  return Object.fromEntries([...new Headers(headers).entries()]);
}
