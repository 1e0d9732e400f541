import { DomainError } from '../../src/common/domain-error';

/**
 * What a rule answered: 'accepted', or the DomainError's code. Anything else (a TypeError, a database error) is
 * named as unexpected, so a table of rules reads as codes and a crash never passes for a refusal.
 */
export function refusal(promise: Promise<unknown>): Promise<string> {
  return promise.then(
    () => 'accepted',
    (error: unknown) => (error instanceof DomainError ? error.code : `unexpected ${String(error)}`),
  );
}
