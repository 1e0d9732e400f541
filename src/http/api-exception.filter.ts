import type { ServerResponse } from 'node:http';
import { ArgumentsHost, Catch, ExceptionFilter, Inject, Optional } from '@nestjs/common';
import type { Request } from 'express';
import { requestIdOf } from './request-id';
import { resolveError } from './error-body';

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

/** OFREP's path prefix (outside /v1, as the protocol defines it). */
export const OFREP_PATH = '/ofrep';

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

/**
 * The path prefixes (`/v1/storage`, ...) whose errors take the storage shape; the storage module provides
 * them from the routes its controllers mount on, so that the shape is chosen in this filter alone.
 */
export const STORAGE_ERROR_PATHS = Symbol('STORAGE_ERROR_PATHS');

/**
 * `api`, or `storage` for a URL under one of `storagePaths`. Case-insensitive, as Express routes: a
 * request that reaches a storage controller is always answered in the storage shape.
 */
export function errorShapeFor(url: string | undefined, storagePaths: readonly string[]): ErrorShape {
  if (url === undefined) return 'api';
  const path = url.toLowerCase();
  const under = (prefix: string) => {
    if (!path.startsWith(prefix.toLowerCase())) return false;
    const next = path.charAt(prefix.length);
    return next === '' || next === '/' || next === '?';
  };
  if (under(OFREP_PATH)) return 'ofrep';
  return storagePaths.some(under) ? 'storage' : 'api';
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
        : { statusCode: status, error: code, message };
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

/**
 * The one exception filter: everything thrown in a request, including before routing (body parsing,
 * unknown routes), answered in the shape of the surface the request addressed.
 */
@Catch()
export class ApiExceptionFilter implements ExceptionFilter {
  constructor(@Optional() @Inject(STORAGE_ERROR_PATHS) private readonly storagePaths: readonly string[] = []) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const request = http.getRequest<Request>();
    const shape = errorShapeFor(request.originalUrl ?? request.url, this.storagePaths);
    writeApiError(http.getResponse<ServerResponse>(), exception, requestIdOf(request), shape);
  }
}
