/** One key's count in its current window. */
export interface WindowCount {
  hits: number;
  /** When the window ends (ms since the epoch); a window is over once `now >= resetsAt`. */
  resetsAt: number;
}

/**
 * In-memory fixed windows, one per key: the counter behind every limit this instance counts by itself (the
 * API and config budgets without Redis or while it is away, and failed authentications per address).
 *
 * Optionally bounded: past `maxKeys`, a new key first drops the windows that have ended, then the oldest one.
 * A window is re-inserted when it starts, so the map stays ordered by start and the oldest is first.
 */
export class FixedWindowCounter {
  private readonly windows = new Map<string, WindowCount>();

  constructor(
    readonly windowMs: number,
    private readonly maxKeys = Number.POSITIVE_INFINITY,
  ) {}

  get size(): number {
    return this.windows.size;
  }

  /** Counts one hit of `key` at `now` and answers its window (the same object while the window lasts). */
  hit(key: string, now: number): WindowCount {
    const window = this.windows.get(key);
    if (window !== undefined && window.resetsAt > now) {
      window.hits += 1;
      return window;
    }
    if (window === undefined && this.windows.size >= this.maxKeys) this.makeRoom(now);
    this.windows.delete(key);
    const started = { hits: 1, resetsAt: now + this.windowMs };
    this.windows.set(key, started);
    return started;
  }

  /** The key's window while it lasts, without counting; an ended window is forgotten. */
  peek(key: string, now: number): WindowCount | undefined {
    const window = this.windows.get(key);
    if (window === undefined || window.resetsAt > now) return window;
    this.windows.delete(key);
    return undefined;
  }

  /** Drops every window that has ended; the owner calls it now and then. */
  sweep(now: number): void {
    for (const [key, window] of this.windows) if (window.resetsAt <= now) this.windows.delete(key);
  }

  private makeRoom(now: number): void {
    for (const [key, window] of this.windows) {
      if (window.resetsAt > now) break;
      this.windows.delete(key);
    }
    if (this.windows.size >= this.maxKeys) this.windows.delete(this.windows.keys().next().value as string);
  }
}

/** Whole seconds until `resetsAt`, at least 1: what `Retry-After` says. */
export function secondsUntil(resetsAt: number, now: number): number {
  return Math.max(1, Math.ceil((resetsAt - now) / 1000));
}
