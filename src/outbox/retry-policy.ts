/**
 * When a channel tries again after a failed attempt, and when it gives up. Each wait is drawn at random within
 * ±`jitter` of its nominal value, so that rows that failed together (a mail server down for a minute) do not all
 * come back at the same moment.
 */
export interface RetryPolicy {
  /** The waits after the 1st, 2nd, ... failed attempt; the last one repeats while the window and the attempts allow. */
  readonly delaysMs: readonly number[];
  /** No attempt starts later than this after the row was written: a retry that would is not scheduled. */
  readonly windowMs: number;
  /** At most this many attempts in all (unset: as many as the window holds). */
  readonly maxAttempts?: number;
  /** A fraction (0-1) of each wait by which it may be shorter or longer. */
  readonly jitter: number;
}

/** What follows a failed attempt: the time of the next one, or giving up. */
export type AfterFailure = { retryAt: number } | { giveUp: true };

/**
 * After the `attempts`-th attempt of a row written at `createdAt` failed at `now` (ms): when to try again. `random`
 * is in [0, 1), as Math.random's.
 */
export function afterFailure(
  policy: RetryPolicy,
  row: { attempts: number; createdAt: number },
  now: number,
  random: () => number = Math.random,
): AfterFailure {
  if (policy.maxAttempts !== undefined && row.attempts >= policy.maxAttempts) return { giveUp: true };
  const nominal = policy.delaysMs[Math.min(Math.max(row.attempts, 1), policy.delaysMs.length) - 1];
  const wait = Math.round(nominal * (1 + policy.jitter * (2 * random() - 1)));
  const retryAt = now + wait;
  return retryAt > row.createdAt + policy.windowMs ? { giveUp: true } : { retryAt };
}
