import { HttpException } from '@nestjs/common';
import { DomainError } from '../common/domain-error';
import { codeForStatus } from '../common/filters/error-body';
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

/** The `{ code, message }` printed for an error. */
export function cliErrorBody(error: unknown): CliErrorBody {
  if (error instanceof CliError || error instanceof DomainError || error instanceof DatabaseSetupError) {
    return { code: error.code, message: error.message };
  }
  if (error instanceof HttpException) {
    const response = error.getResponse();
    const message = typeof response === 'object' && response && 'message' in response ? response.message : error.message;
    return { code: codeForStatus(error.getStatus()), message: Array.isArray(message) ? message.join('; ') : String(message) };
  }
  return { code: 'INTERNAL_ERROR', message: error instanceof Error ? error.message : String(error) };
}
