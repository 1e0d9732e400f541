import type { ServerResponse } from 'node:http';
import { ArgumentsHost, Catch, ExceptionFilter } from '@nestjs/common';
import type { Request } from 'express';
import { requestIdOf } from '../request-id';
import { resolveError } from './error-body';

/** Body of every non-storage error: `{ statusCode, error, message }`, message being one string. */
export interface ApiErrorBody {
  statusCode: number;
  error: string;
  message: string;
}

/** Errors that tell the client when to come back (429) carry it here; it becomes `Retry-After`. */
export interface RetryAfter {
  retryAfterSeconds?: number;
}

/** Writes an error in the API's shape on a plain Node response (used by the filter and the poll's lean path). */
export function writeApiError(response: ServerResponse, exception: unknown, requestId?: string): void {
  const { status, code, message } = resolveError(exception, requestId);
  if (response.headersSent) {
    response.destroy();
    return;
  }
  const body = JSON.stringify({ statusCode: status, error: code, message } satisfies ApiErrorBody);
  const retryAfter = (exception as RetryAfter | undefined)?.retryAfterSeconds;
  if (retryAfter !== undefined) response.setHeader('Retry-After', String(retryAfter));
  response.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(body) });
  response.end(body);
}

@Catch()
export class ApiExceptionFilter implements ExceptionFilter {
  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    writeApiError(http.getResponse<ServerResponse>(), exception, requestIdOf(http.getRequest<Request>()));
  }
}
