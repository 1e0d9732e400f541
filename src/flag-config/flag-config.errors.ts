import { HttpStatus } from '@nestjs/common';
import { DomainError } from '../common/domain-error';
import { RetryAfter } from '../common/filters/api-exception.filter';

export enum FlagConfigErrorCode {
  RATE_LIMITED = 'RATE_LIMITED',
}

export class ConfigRateLimitedError extends DomainError<FlagConfigErrorCode> implements RetryAfter {
  constructor(
    limit: number,
    readonly retryAfterSeconds: number,
  ) {
    super(
      HttpStatus.TOO_MANY_REQUESTS,
      FlagConfigErrorCode.RATE_LIMITED,
      `Rate limit exceeded: at most ${limit} config requests per minute per API key; retry after ${retryAfterSeconds} s`,
    );
  }
}
