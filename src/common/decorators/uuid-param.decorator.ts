import { BadRequestException, Param, ParseUUIDPipe } from '@nestjs/common';

/** A path parameter that must be a UUID; otherwise 400 with a message naming the parameter. */
export function UuidParam(name: string, toError: (name: string) => Error = defaultError) {
  return Param(name, new ParseUUIDPipe({ exceptionFactory: () => toError(name) }));
}

function defaultError(name: string): Error {
  return new BadRequestException(`${name} must be a valid UUID`);
}
