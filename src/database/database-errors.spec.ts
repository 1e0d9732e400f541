import { QueryFailedError, QueryRunnerProviderAlreadyReleasedError } from 'typeorm';
import { isDatabaseUnavailable } from './database-errors';

const withCode = (code: string, message = 'x') => Object.assign(new Error(message), { code });

describe('isDatabaseUnavailable', () => {
  it.each([
    ['a refused connection', withCode('ECONNREFUSED')],
    ['a reset connection', withCode('ECONNRESET')],
    ['an unreachable host', withCode('EHOSTUNREACH')],
    ['a connection exception (class 08)', withCode('08006')],
    ['a server shutting down', withCode('57P01')],
    ['a server starting up', withCode('57P03')],
    ['too many connections', withCode('53300')],
    ['a statement cancelled by statement_timeout', new QueryFailedError('SELECT 1', [], withCode('57014'))],
    ['a pool that could not connect in time', new Error('timeout exceeded when trying to connect')],
    ['a connection that died under a query', new Error('Connection terminated unexpectedly')],
    ['a client-side query timeout', new Error('Query read timeout')],
    ['a transaction whose connection was lost under it', new QueryRunnerProviderAlreadyReleasedError()],
  ])('%s is a 503', (_label, error) => {
    expect(isDatabaseUnavailable(error)).toBe(true);
  });

  it.each([
    ['a unique violation', new QueryFailedError('INSERT', [], withCode('23505'))],
    ['a syntax error', new QueryFailedError('SELEC', [], withCode('42601'))],
    ['a plain bug', new TypeError("Cannot read properties of undefined (reading 'id')")],
    ['a non-error', 'ECONNREFUSED'],
    ['nothing', undefined],
  ])('%s is not', (_label, error) => {
    expect(isDatabaseUnavailable(error)).toBe(false);
  });
});
