import type { ServerResponse } from 'node:http';
import { resolveError } from './error-body';
import type { Surface } from './surfaces';

/** Body of every error outside storage: `{ statusCode, error, message }`, message being one string. */
export interface ApiErrorBody {
  statusCode: number;
  error: string;
  message: string;
}

/** Body of every storage error (storage API, upload host, CDN): `{ error: { code, message } }`. */
export interface StorageErrorBody {
  error: { code: string; message: string };
}

/** Body of every OFREP error (`/ofrep/...`): OpenFeature's `{errorCode, errorDetails}`, with `key` for a flag. */
export interface OfrepErrorBody {
  key?: string;
  errorCode: string;
  errorDetails: string;
}

export type ErrorShape = 'api' | 'storage' | 'ofrep';

/** An error that concerns one flag of an OFREP request: its body names the key. */
export interface OfrepFlagKey {
  ofrepKey?: string;
}

/** Our codes as OFREP's: a body that is not JSON is its PARSE_ERROR, an unexpected fault its GENERAL. */
const OFREP_CODES: Record<string, string> = { VALIDATION_ERROR: 'PARSE_ERROR', INTERNAL_ERROR: 'GENERAL' };

/** Errors that tell the client when to come back (429) carry it here; it becomes `Retry-After`. */
export interface RetryAfter {
  retryAfterSeconds?: number;
}

/** Headers an error's status needs (Content-Range on a 416). */
export interface ErrorHeaders {
  responseHeaders?: Record<string, string>;
}

/** Fields an error adds to the API's body (an import's 409 carries its report). */
export interface ErrorDetails {
  responseDetails?: Record<string, unknown>;
}

/** The error shape each surface answers in: the storage shape under storage, the upload host and the CDN. */
export function errorShapeOf(surface: Surface): ErrorShape {
  if (surface === 'storage' || surface === 'upload' || surface === 'cdn') return 'storage';
  return surface === 'ofrep' ? 'ofrep' : 'api';
}

/** Writes an error on a plain Node response; used by the filters and by the poll's lean path. */
export function writeApiError(response: ServerResponse, exception: unknown, requestId?: string, shape: ErrorShape = 'api'): void {
  const { status, code, message } = resolveError(exception, requestId);
  // A download that fails after its headers went out, or a client that already went away.
  if (response.headersSent || response.destroyed) {
    response.destroy();
    return;
  }
  const body: ApiErrorBody | StorageErrorBody | OfrepErrorBody =
    shape === 'storage'
      ? { error: { code, message } }
      : shape === 'ofrep'
        ? ofrepBody(exception, code, message)
        : { statusCode: status, error: code, message, ...(exception as ErrorDetails | undefined)?.responseDetails };
  const json = JSON.stringify(body);
  const retryAfter = (exception as RetryAfter | undefined)?.retryAfterSeconds;
  if (retryAfter !== undefined) response.setHeader('Retry-After', String(retryAfter));
  for (const [name, value] of Object.entries((exception as ErrorHeaders | undefined)?.responseHeaders ?? {})) {
    response.setHeader(name, value);
  }
  response.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(json) });
  response.end(json);
}

function ofrepBody(exception: unknown, code: string, message: string): OfrepErrorBody {
  const key = (exception as OfrepFlagKey | undefined)?.ofrepKey;
  return { ...(key === undefined ? {} : { key }), errorCode: OFREP_CODES[code] ?? code, errorDetails: message };
}
