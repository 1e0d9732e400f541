/**
 * The database cannot be set up as configured, for a reason the operator has to fix (a folder PostgreSQL cannot
 * reach, a role without the rights to migrate). Its message says what and how; boot prints it alone, without a
 * stack trace, and exits 1.
 */
export class DatabaseSetupError extends Error {
  readonly code = 'DATABASE_SETUP_ERROR';

  constructor(message: string) {
    super(message);
    this.name = 'DatabaseSetupError';
  }
}
