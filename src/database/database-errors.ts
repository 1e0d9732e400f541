import { QueryFailedError } from 'typeorm';

/** Node's socket errors when PostgreSQL cannot be reached. */
const SOCKET_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH']);
/** SQLSTATEs of a server that is shutting down, starting, full, or that cancelled a statement that ran too long. */
const UNAVAILABLE_STATES = new Set(['57P01', '57P02', '57P03', '53300', '57014']);
/**
 * TypeORM's, when the connection of a transaction was lost under it (PostgreSQL shut down mid-transaction) and
 * the transaction's next statement finds its query runner released.
 */
const TYPEORM_NAMES = new Set(['QueryRunnerProviderAlreadyReleasedError']);
/** What `pg` says when a connection could not be made or died under a query. */
const PG_MESSAGES = [
  'timeout exceeded when trying to connect',
  'Connection terminated',
  'Client has encountered a connection error and is not queryable',
  'Query read timeout',
];

/**
 * The database is unreachable or refused to serve for now: the request may well succeed in a moment, so it is
 * a 503, not a 500 (which says the service is broken).
 */
export function isDatabaseUnavailable(error: unknown): boolean {
  const cause = error instanceof QueryFailedError ? (error.driverError as unknown) : error;
  // Duck-typed: socket errors are made by Node's own Error, which another realm (a test VM) does not share.
  if (typeof cause !== 'object' || cause === null) return false;
  const { code, message, name } = cause as { code?: unknown; message?: unknown; name?: unknown };
  if (typeof name === 'string' && TYPEORM_NAMES.has(name)) return true;
  if (typeof code === 'string' && (SOCKET_CODES.has(code) || UNAVAILABLE_STATES.has(code) || code.startsWith('08'))) return true;
  return typeof message === 'string' && PG_MESSAGES.some((known) => message.includes(known));
}
