import { HttpStatus } from '@nestjs/common';
import { DomainError } from '../common/domain-error';
import { RetryAfter } from '../http/error-response';

/** The one 429: `RATE_LIMITED` with `Retry-After`, in the error shape of the route it was raised on. */
export class RateLimitedError extends DomainError<'RATE_LIMITED'> implements RetryAfter {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(HttpStatus.TOO_MANY_REQUESTS, 'RATE_LIMITED', message);
  }
}
