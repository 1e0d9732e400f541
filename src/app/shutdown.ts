import type { LoggerService } from '@nestjs/common';
import type { DrainTimings } from '../http/http-drain';

/** What SHUTDOWN_GRACE_SECONDS keeps, after the drain, for closing the app and stopping the database: 25 %, at most 2 s. */
const CLOSING_SHARE = 0.25;
const CLOSING_MAX_MS = 2_000;
/** Kept at the very end for the exit itself (less when the grace period is short). */
const EXIT_MARGIN_MS = 100;

/** How the grace period is shared, each step's end counted from the signal. */
export interface ShutdownBudget {
  /** The drain's timings; its `graceMs` is when it cuts the connections still open. */
  drain: DrainTimings;
  /** When the app's close (its shutdown hooks and pools) is no longer waited for, so that the database has its time. */
  appClosedByMs: number;
  /** When the database has stopped, however it answers. */
  databaseStoppedByMs: number;
}

/**
 * The drain keeps most of the grace period (the keep-alive period plus a second, at most 80 % of its share, then
 * requests in flight); closing the app and the database have the rest, so that the whole shutdown ends within
 * SHUTDOWN_GRACE_SECONDS even when the database never answers.
 */
export function shutdownBudget(graceMs: number, keepAliveMs: number): ShutdownBudget {
  const closingMs = Math.min(CLOSING_MAX_MS, graceMs * CLOSING_SHARE);
  const drainGraceMs = graceMs - closingMs;
  return {
    drain: { drainMs: Math.min(keepAliveMs + 1_000, drainGraceMs * 0.8), fenceMs: 500, graceMs: drainGraceMs },
    appClosedByMs: graceMs - closingMs / 2,
    databaseStoppedByMs: graceMs - Math.min(EXIT_MARGIN_MS, closingMs / 4),
  };
}

export interface ShutdownSteps {
  drain(timings: DrainTimings): Promise<void>;
  /** Nest's close: the shutdown hooks (the bus's outbox, stream slots, the scheduler), then the pools. */
  closeApp(): Promise<void>;
  /** Stops the database within `timeoutMs` (an embedded one; nothing to do with DATABASE_URL). */
  stopDatabase(timeoutMs: number): Promise<void>;
}

/**
 * Runs the steps in order, each within its end in the budget: a step still running then is left behind (its
 * connections are cut when the process exits) and the next one starts. Resolves to whether every step ended, and
 * ended well, in its time; the ones that did not are logged.
 */
export async function shutDown(steps: ShutdownSteps, budget: ShutdownBudget, logger: LoggerService): Promise<boolean> {
  const started = Date.now();
  const left = (byMs: number) => Math.max(0, started + byMs - Date.now());
  let clean = true;
  const step = async (name: string, run: () => Promise<void>, byMs: number) => {
    const outcome = await settleWithin(run, left(byMs));
    if (outcome === 'done') return;
    clean = false;
    logger.warn(
      outcome === 'late'
        ? `${name} did not end within its part of SHUTDOWN_GRACE_SECONDS (${byMs} ms after the signal); going on without it`
        : `${name} failed: ${String(outcome.error)}`,
    );
  };
  // The drain cuts what is left at its own end; its bound here only guards the steps after it.
  await step('Draining connections', () => steps.drain(budget.drain), budget.appClosedByMs);
  await step('Closing the app', () => steps.closeApp(), budget.appClosedByMs);
  await step('Stopping the database', () => steps.stopDatabase(left(budget.databaseStoppedByMs)), budget.databaseStoppedByMs);
  return clean;
}

async function settleWithin(run: () => Promise<void>, ms: number): Promise<'done' | 'late' | { error: unknown }> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), ms)));
  try {
    return await Promise.race([
      Promise.resolve()
        .then(run)
        .then(
          () => 'done' as const,
          (error: unknown) => ({ error }),
        ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
