/**
 * Server-sent event streams, whatever they carry (the config change stream, the organization event stream): the
 * headers they open with, their keep-alive comment, their lifetime and the reconnect hint they end with.
 */
import type { OutgoingHttpHeaders } from 'node:http';

/** A stream ends after this, with a `retry:` hint: connections move between instances as they come and go. */
export const STREAM_LIFETIME_MS = 10 * 60_000;
/** The reconnect delay a closing stream suggests: this, plus up to as much again at random, so clients spread out. */
export const RETRY_BASE_MS = 1_000;

/** The headers a stream opens with. */
export const SSE_HEADERS: Readonly<OutgoingHttpHeaders> = {
  'Content-Type': 'text/event-stream; charset=utf-8',
  'Cache-Control': 'no-cache',
  // nginx passes events on as they come (it would buffer them otherwise).
  'X-Accel-Buffering': 'no',
};

/** A comment line: clients skip it, and proxies see traffic on a stream that has had no event for a while. */
export const HEARTBEAT_FRAME = Buffer.from(': keep-alive\n\n');

/** The last frame of a stream: its reconnect delay. `random` is in [0, 1), as Math.random()'s. */
export function retryFrame(random = Math.random()): string {
  const retry = RETRY_BASE_MS + Math.floor(random * RETRY_BASE_MS);
  return `retry: ${retry}\n\n`;
}

/** Whether a stream opened at `openedAt` has reached the end of its lifetime as of `now`. */
export function hasOutlived(openedAt: number, now: number): boolean {
  return openedAt <= now - STREAM_LIFETIME_MS;
}
