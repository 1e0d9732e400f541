import { ArgumentsHost, Catch, ExceptionFilter } from '@nestjs/common';
import type { Request, Response } from 'express';
import { resolveError } from '../common/filters/error-body';
import { requestIdOf } from '../common/request-id';

/** The storage error body of spec 7.2 and decisions.md: `{ error: { code, message } }`. */
export interface StorageErrorBody {
  error: { code: string; message: string };
}

/**
 * Bound with @UseFilters on every storage controller (API, upload host, CDN), so that the guards' 401/403
 * and the validation pipe's 400 get the storage shape too.
 */
@Catch()
export class StorageExceptionFilter implements ExceptionFilter {
  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const request = http.getRequest<Request>();
    const response = http.getResponse<Response>();
    const { status, code, message } = resolveError(exception, requestIdOf(request));
    // A download that fails after its headers went out, or an upload whose client went away.
    if (response.headersSent || response.destroyed) {
      response.destroy();
      return;
    }
    // An error may carry headers its status needs (Content-Range on a 416).
    const headers = (exception as { responseHeaders?: Record<string, string> } | null)?.responseHeaders;
    if (headers) response.set(headers);
    const body: StorageErrorBody = { error: { code, message } };
    response.status(status).json(body);
  }
}
