/**
 * The database cannot be set up as configured, for a reason the operator has to fix (a folder PostgreSQL cannot
 * reach, a role without the rights to migrate, a cluster another process runs). Its message says what and how;
 * boot prints it alone, without a stack trace, and exits 1; the CLI prints it with its code.
 */
export class DatabaseSetupError extends Error {
  constructor(
    message: string,
    readonly code: 'DATABASE_SETUP_ERROR' | 'DATABASE_IN_USE' = 'DATABASE_SETUP_ERROR',
  ) {
    super(message);
    this.name = 'DatabaseSetupError';
  }
}

/**
 * The embedded cluster under DATA_DIR is run by a live process other than this one (a service started earlier with
 * the same DATA_DIR, or the CLI): one cluster cannot be shared, so this process stops before touching it.
 */
export class DatabaseInUseError extends DatabaseSetupError {
  constructor(
    message: string,
    readonly clusterDir: string,
    readonly postmasterPid: number,
  ) {
    super(message, 'DATABASE_IN_USE');
    this.name = 'DatabaseInUseError';
  }
}
