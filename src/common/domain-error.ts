import { HttpStatus } from '@nestjs/common';

/**
 * A rule of the service was broken. Modules throw these with their own code enum; the global filters
 * turn them into the spec's bodies, so services never build HTTP responses themselves.
 */
export class DomainError<Code extends string = string> extends Error {
  constructor(
    readonly status: HttpStatus,
    readonly code: Code,
    message: string,
  ) {
    super(message);
    this.name = 'DomainError';
  }
}
