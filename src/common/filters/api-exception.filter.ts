import { ArgumentsHost, Catch, ExceptionFilter, HttpStatus } from '@nestjs/common';
import type { Request, Response } from 'express';
import { requestIdOf } from '../request-id';
import { resolveError } from './error-body';

/** Body of every non-storage error: `{ statusCode, error, message }`, message being one string. */
export interface ApiErrorBody {
  statusCode: number;
  error: string;
  message: string;
}

@Catch()
export class ApiExceptionFilter implements ExceptionFilter {
  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const request = http.getRequest<Request>();
    const response = http.getResponse<Response>();
    const { status, code, message } = resolveError(exception, requestIdOf(request));
    if (response.headersSent) {
      response.destroy();
      return;
    }
    if (status === HttpStatus.TOO_MANY_REQUESTS) {
      const retryAfter = (exception as { retryAfterSeconds?: number }).retryAfterSeconds;
      if (retryAfter !== undefined) response.setHeader('Retry-After', String(retryAfter));
    }
    const body: ApiErrorBody = { statusCode: status, error: code, message };
    response.status(status).json(body);
  }
}
