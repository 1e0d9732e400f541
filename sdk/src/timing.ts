/**
 * Every deliberate wait of the client (the poll interval, backoff, Retry-After, stream reconnects) goes through a
 * Scheduler, so a test, or a game loop with its own clock, decides when time passes. Watchdogs on a hung connection
 * (requestTimeoutMs, streamSilenceTimeoutMs) are not waits the client chooses and use the process's own timers.
 */
export interface Scheduler {
  setTimeout(callback: () => void, delayMs: number): unknown;
  clearTimeout(handle: unknown): void;
  /** Milliseconds since the epoch, as Date.now(): what Retry-After is measured against. */
  now(): number;
}

/** Node's own timers; the longest a Node timer can wait is 2^31 - 1 ms. */
export const systemScheduler: Scheduler = {
  setTimeout: (callback, delayMs) => setTimeout(callback, Math.min(delayMs, MAX_TIMER_MS)),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
  now: () => Date.now(),
};

const MAX_TIMER_MS = 2 ** 31 - 1;

export const DEFAULT_POLL_INTERVAL_SECONDS = 20;
export const BACKOFF_MIN_MS = 1_000;
export const BACKOFF_MAX_MS = 5 * 60_000;

/** The payload's pollIntervalSeconds, ±10 %, so servers started together do not poll together. */
export function pollDelay(intervalSeconds: number, random: () => number): number {
  return intervalSeconds * 1000 * (0.9 + 0.2 * random());
}

/** 1 s, 2 s, 4 s … for the 1st, 2nd, 3rd … failure in a row, ±20 %, never outside 1 s … 5 min. */
export function backoffDelay(failures: number, random: () => number): number {
  const base = Math.min(BACKOFF_MAX_MS, BACKOFF_MIN_MS * 2 ** Math.max(0, failures - 1));
  return Math.min(BACKOFF_MAX_MS, Math.max(BACKOFF_MIN_MS, base * (0.8 + 0.4 * random())));
}

/** Retry-After's wait, then up to 10 % more: never earlier than the service asked, and not all at once. */
export function retryAfterDelay(retryAfterMs: number, random: () => number): number {
  return Math.max(BACKOFF_MIN_MS, retryAfterMs) * (1 + 0.1 * random());
}

/** A stream the service ended with a `retry:` hint is reopened after that hint, up to twice as long. */
export function reconnectDelay(retryMs: number, random: () => number): number {
  return retryMs * (1 + random());
}

/** Retry-After in milliseconds: delay-seconds or an HTTP-date (RFC 9110 10.2.3); undefined when absent or unreadable. */
export function parseRetryAfter(header: string | null, now: number): number | undefined {
  if (header === null) return undefined;
  const value = header.trim();
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
