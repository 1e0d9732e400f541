import { HttpException } from '@nestjs/common';
import { DomainError } from '../common/domain-error';
import { resolveError } from '../http/error-body';
import { DatabaseSetupError } from '../database/database-setup-error';

/** An error the CLI reports as `{ error: { code, message } }`. */
export class CliError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export interface CliErrorBody {
  code: string;
  message: string;
}

/**
 * The `{ code, message }` printed for an error. A service's errors (DomainError, HttpException) get the code and
 * message the admin API answers with, from the same resolution (error-body.ts). The CLI's own errors and the
 * database launcher's carry their code. Anything else is INTERNAL_ERROR with its message: unlike an HTTP client,
 * the operator at the command line runs this process, so the message is shown rather than hidden and logged.
 */
export function cliErrorBody(error: unknown): CliErrorBody {
  if (error instanceof CliError || error instanceof DatabaseSetupError) {
    return { code: error.code, message: error.message };
  }
  if (error instanceof DomainError || error instanceof HttpException) {
    const { code, message } = resolveError(error);
    return { code, message };
  }
  return { code: 'INTERNAL_ERROR', message: error instanceof Error ? error.message : String(error) };
}
