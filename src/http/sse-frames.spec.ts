import { hasOutlived, HEARTBEAT_FRAME, retryFrame, SSE_HEADERS, STREAM_LIFETIME_MS } from './sse-frames';

describe('SSE frames', () => {
  it('frames a heartbeat as a comment block', () => {
    expect(HEARTBEAT_FRAME.toString()).toBe(': keep-alive\n\n');
  });

  it('suggests a reconnect delay of 1 s plus up to 1 s more at random', () => {
    expect(retryFrame(0)).toBe('retry: 1000\n\n');
    expect(retryFrame(0.5)).toBe('retry: 1500\n\n');
    expect(retryFrame(0.99999)).toBe('retry: 1999\n\n');
    const retry = Number(/^retry: (\d+)\n\n$/.exec(retryFrame())![1]);
    expect(retry).toBeGreaterThanOrEqual(1_000);
    expect(retry).toBeLessThan(2_000);
  });

  it('ends a stream once it has been open 10 minutes, and not before', () => {
    const openedAt = Date.parse('2026-12-04T18:00:00Z');
    expect(STREAM_LIFETIME_MS).toBe(10 * 60_000);
    expect(hasOutlived(openedAt, openedAt)).toBe(false);
    expect(hasOutlived(openedAt, openedAt + STREAM_LIFETIME_MS - 1)).toBe(false);
    expect(hasOutlived(openedAt, openedAt + STREAM_LIFETIME_MS)).toBe(true);
  });

  it('opens a stream as text/event-stream that neither caches nor buffers at a proxy', () => {
    expect(SSE_HEADERS).toEqual({ 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-cache', 'X-Accel-Buffering': 'no' });
  });
});
