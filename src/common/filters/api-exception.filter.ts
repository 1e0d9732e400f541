import type { ServerResponse } from 'node:http';
import { ArgumentsHost, Catch, ExceptionFilter } from '@nestjs/common';
import type { Request } from 'express';
import { requestIdOf } from '../request-id';
import { resolveError } from './error-body';

/** Body of every error outside storage: `{ statusCode, error, message }`, message being one string. */
export interface ApiErrorBody {
  statusCode: number;
  error: string;
  message: string;
}

/** Body of every storage error (spec 7.2, decisions.md): `{ error: { code, message } }`. */
export interface StorageErrorBody {
  error: { code: string; message: string };
}

export type ErrorShape = 'api' | 'storage';

/** Errors that tell the client when to come back (429) carry it here; it becomes `Retry-After`. */
export interface RetryAfter {
  retryAfterSeconds?: number;
}

/** Headers an error's status needs (Content-Range on a 416). */
export interface ErrorHeaders {
  responseHeaders?: Record<string, string>;
}

const STORAGE_PATHS = /^\/(v1\/storage|upload|c)(\/|\?|$)/;

/** The storage surface (its API, upload host and CDN) answers errors in the storage shape. */
export function errorShapeFor(url: string | undefined): ErrorShape {
  return url !== undefined && STORAGE_PATHS.test(url) ? 'storage' : 'api';
}

/** Writes an error on a plain Node response; used by the filters and by the poll's lean path. */
export function writeApiError(response: ServerResponse, exception: unknown, requestId?: string, shape: ErrorShape = 'api'): void {
  const { status, code, message } = resolveError(exception, requestId);
  // A download that fails after its headers went out, or a client that already went away.
  if (response.headersSent || response.destroyed) {
    response.destroy();
    return;
  }
  const body: ApiErrorBody | StorageErrorBody =
    shape === 'storage' ? { error: { code, message } } : { statusCode: status, error: code, message };
  const json = JSON.stringify(body);
  const retryAfter = (exception as RetryAfter | undefined)?.retryAfterSeconds;
  if (retryAfter !== undefined) response.setHeader('Retry-After', String(retryAfter));
  for (const [name, value] of Object.entries((exception as ErrorHeaders | undefined)?.responseHeaders ?? {})) {
    response.setHeader(name, value);
  }
  response.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(json) });
  response.end(json);
}

/**
 * The global filter: everything thrown in a request, including before routing (body parsing, unknown
 * routes), answered in the shape of the surface the request addressed.
 */
@Catch()
export class ApiExceptionFilter implements ExceptionFilter {
  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const request = http.getRequest<Request>();
    writeApiError(http.getResponse<ServerResponse>(), exception, requestIdOf(request), errorShapeFor(request.originalUrl ?? request.url));
  }
}
