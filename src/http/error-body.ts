import { HttpException, HttpStatus, Logger } from '@nestjs/common';
import { isDatabaseUnavailable } from '../database/database-errors';
import { DomainError } from '../common/domain-error';

export interface ResolvedError {
  status: number;
  code: string;
  message: string;
}

const CODE_BY_STATUS: Record<number, string> = {
  [HttpStatus.BAD_REQUEST]: 'VALIDATION_ERROR',
  [HttpStatus.UNAUTHORIZED]: 'UNAUTHORIZED',
  [HttpStatus.FORBIDDEN]: 'FORBIDDEN',
  [HttpStatus.NOT_FOUND]: 'NOT_FOUND',
  [HttpStatus.METHOD_NOT_ALLOWED]: 'METHOD_NOT_ALLOWED',
  [HttpStatus.REQUEST_TIMEOUT]: 'REQUEST_TIMEOUT',
  [HttpStatus.CONFLICT]: 'CONFLICT',
  [HttpStatus.PAYLOAD_TOO_LARGE]: 'PAYLOAD_TOO_LARGE',
  [HttpStatus.UNSUPPORTED_MEDIA_TYPE]: 'UNSUPPORTED_MEDIA_TYPE',
  [HttpStatus.TOO_MANY_REQUESTS]: 'RATE_LIMITED',
  [HttpStatus.INTERNAL_SERVER_ERROR]: 'INTERNAL_ERROR',
  [HttpStatus.SERVICE_UNAVAILABLE]: 'SERVICE_UNAVAILABLE',
};

export function codeForStatus(status: number): string {
  return CODE_BY_STATUS[status] ?? (status >= 500 ? 'INTERNAL_ERROR' : 'ERROR');
}

const logger = new Logger('UnhandledError');

/**
 * Reduces anything thrown during a request to status, code and one message string.
 * Unknown errors are a 500 that is logged with the request id and never leaks its details.
 */
export function resolveError(exception: unknown, requestId?: string): ResolvedError {
  if (exception instanceof DomainError) {
    return { status: exception.status, code: exception.code, message: exception.message };
  }
  if (exception instanceof HttpException) {
    const status = exception.getStatus();
    return { status, code: codeForStatus(status), message: httpMessage(exception) };
  }
  // Express's own client errors (a malformed URI escape, say) carry an HTTP status and say they are safe to show.
  const status = (exception as { status?: unknown; expose?: unknown })?.status;
  if (typeof status === 'number' && status >= 400 && status < 500 && (exception as { expose?: unknown }).expose) {
    return { status, code: codeForStatus(status), message: String((exception as Error).message) };
  }
  if (isDatabaseUnavailable(exception)) {
    logger.warn(`request ${requestId ?? '-'}: the database is unavailable: ${(exception as Error).message}`);
    return {
      status: HttpStatus.SERVICE_UNAVAILABLE,
      code: 'SERVICE_UNAVAILABLE',
      message: 'The database is unavailable; try again shortly',
    };
  }
  logger.error(`request ${requestId ?? '-'}: ${(exception as Error)?.stack ?? String(exception)}`);
  return { status: HttpStatus.INTERNAL_SERVER_ERROR, code: 'INTERNAL_ERROR', message: 'Internal server error' };
}

function httpMessage(exception: HttpException): string {
  const response = exception.getResponse();
  if (typeof response === 'string') return response;
  const message = (response as { message?: unknown }).message;
  if (Array.isArray(message)) return message.map(String).join('; ');
  if (typeof message === 'string') return message;
  return exception.message;
}
