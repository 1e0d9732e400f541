import { FlagstoreError, httpError } from './errors';
import { asFlagstoreError, bearer, Fetch, withDeadline } from './http';
import { SseEvent, SseParser } from './sse';
import { backoffDelay, BACKOFF_MIN_MS, parseRetryAfter, reconnectDelay, retryAfterDelay, Scheduler } from './timing';

const WHAT = 'GET /flags/config/stream';

/** What the change stream needs from the client it serves. */
export interface ChangeStreamHost {
  readonly url: string;
  readonly apiKey: string;
  readonly fetch: Fetch;
  readonly scheduler: Scheduler;
  readonly random: () => number;
  readonly requestTimeoutMs: number;
  readonly silenceTimeoutMs: number;
  /** The etag of the payload the client holds, sent as Last-Event-ID: the service then announces only a newer one. */
  currentEtag(): string | undefined;
  /** Until when (scheduler time) a 429 holds back every request. */
  heldUntil(): number;
  /** The stream is up: events now bring changes, polling may pause. */
  opened(): void;
  /** A `refetchEvaluation` event: the config is now at `etag` (undefined when the event named none). */
  announced(etag: string | undefined): void;
  /** The stream is down: polling takes over until it is back. */
  dropped(): void;
  /** The stream was refused or lost; the client reports it, stops on 401/403 and holds on 429. */
  failed(error: FlagstoreError, retryAfterMs: number | undefined): void;
}

/**
 * GET /flags/config/stream, read as server-sent events over fetch. It reconnects on its own: after the service's
 * `retry:` hint (with jitter) when the service ended a stream that worked, with exponential backoff when it was
 * refused or dropped, and never before a 429's Retry-After. A stream silent for longer than three of the
 * service's 15 s keep-alive comments is taken for dead.
 */
export class ChangeStream {
  private timer: unknown;
  private hasTimer = false;
  private controller: AbortController | undefined;
  private failures = 0;
  private retryMs: number | undefined;
  private closed = false;

  constructor(private readonly host: ChangeStreamHost) {}

  start(): void {
    if (!this.closed && !this.hasTimer && this.controller === undefined) void this.connect();
  }

  close(): void {
    this.closed = true;
    if (this.hasTimer) this.host.scheduler.clearTimeout(this.timer);
    this.hasTimer = false;
    this.controller?.abort(new FlagstoreError('closed', 'the client was closed'));
  }

  private schedule(delayMs: number): void {
    if (this.closed) return;
    this.hasTimer = true;
    this.timer = this.host.scheduler.setTimeout(() => {
      this.hasTimer = false;
      void this.connect();
    }, delayMs);
  }

  private async connect(): Promise<void> {
    const { host } = this;
    const held = host.heldUntil() - host.scheduler.now();
    if (held > 0) return this.schedule(held);
    const controller = new AbortController();
    this.controller = controller;
    const headers: Record<string, string> = { ...bearer(host.apiKey), Accept: 'text/event-stream', 'Cache-Control': 'no-cache' };
    const etag = host.currentEtag();
    if (etag !== undefined) headers['Last-Event-ID'] = etag;

    let response: Response;
    try {
      response = await withDeadline(host.fetch(host.url, { headers, signal: controller.signal }), controller, host.requestTimeoutMs, WHAT);
    } catch (error) {
      this.controller = undefined;
      if (!this.closed) this.lost(asFlagstoreError(error, WHAT), false);
      return;
    }
    if (this.closed) {
      response.body?.cancel().catch(() => undefined);
      return;
    }

    if (response.status !== 200 || !isEventStream(response)) {
      this.controller = undefined;
      let body = '';
      if (response.status === 200) response.body?.cancel().catch(() => undefined);
      else body = await response.text().catch(() => '');
      if (this.closed) return;
      const retryAfterMs = parseRetryAfter(response.headers.get('Retry-After'), host.scheduler.now());
      const error =
        response.status === 200
          ? new FlagstoreError('stream', `${WHAT} answered ${response.headers.get('Content-Type') ?? 'no content type'}, not text/event-stream`, {
              status: 200,
            })
          : httpError(WHAT, response.status, body, retryAfterMs === undefined ? undefined : Math.ceil(retryAfterMs / 1000));
      return this.refused(error, retryAfterMs);
    }

    host.opened();
    const { received, error } = await this.read(response.body!, controller);
    this.controller = undefined;
    if (this.closed) return;
    host.dropped();
    if (error === undefined && received) {
      // The service ended a stream that worked (it does after 10 minutes): come back after its hint.
      this.failures = 0;
      return this.schedule(reconnectDelay(this.retryMs ?? BACKOFF_MIN_MS, host.random));
    }
    this.lost(error ?? new FlagstoreError('stream', `${WHAT} ended before sending anything`), received);
  }

  private async read(body: ReadableStream<Uint8Array>, controller: AbortController): Promise<{ received: boolean; error?: FlagstoreError }> {
    const parser = new SseParser({ event: (event) => this.event(event), retry: (delayMs) => (this.retryMs = delayMs) });
    const reader = body.getReader();
    const { silenceTimeoutMs } = this.host;
    let watchdog: NodeJS.Timeout | undefined;
    const watch = () => {
      clearTimeout(watchdog);
      watchdog = setTimeout(() => controller.abort(new FlagstoreError('stream', `${WHAT} was silent for ${silenceTimeoutMs} ms`)), silenceTimeoutMs);
      watchdog.unref();
    };
    // An injected fetch may ignore the signal: cancelling the reader ends a pending read() either way.
    const onAbort = () => void reader.cancel(controller.signal.reason).catch(() => undefined);
    controller.signal.addEventListener('abort', onAbort, { once: true });
    let received = false;
    let failure: unknown;
    try {
      watch();
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        received = true;
        watch();
        parser.push(value);
      }
    } catch (error) {
      failure = error;
    } finally {
      clearTimeout(watchdog);
      controller.signal.removeEventListener('abort', onAbort);
    }
    if (controller.signal.aborted) failure = controller.signal.reason;
    if (failure === undefined) return { received };
    return {
      received,
      error: new FlagstoreError('stream', `${WHAT} dropped: ${asFlagstoreError(failure, 'reading it').message}`, { cause: failure }),
    };
  }

  private event(event: SseEvent): void {
    if (this.closed || event.type !== 'message') return;
    let data: unknown;
    try {
      data = JSON.parse(event.data);
    } catch {
      return; // not an event of this contract
    }
    if (typeof data !== 'object' || data === null || (data as { type?: unknown }).type !== 'refetchEvaluation') return;
    const { etag } = data as { etag?: unknown };
    this.host.announced(typeof etag === 'string' ? etag : undefined);
  }

  /** Refused (an HTTP status) when opening: report, then try again later unless that was a 401/403. */
  private refused(error: FlagstoreError, retryAfterMs: number | undefined): void {
    this.host.failed(error, retryAfterMs);
    if (this.closed) return;
    this.failures += 1;
    if (error.kind === 'rate-limited' && retryAfterMs !== undefined) return this.schedule(retryAfterDelay(retryAfterMs, this.host.random));
    this.schedule(backoffDelay(this.failures, this.host.random));
  }

  /** Could not connect, or dropped: report, then back off (from 1 s again if the stream had been working). */
  private lost(error: FlagstoreError, wasWorking: boolean): void {
    this.host.failed(error, undefined);
    if (this.closed) return;
    this.failures = wasWorking ? 1 : this.failures + 1;
    this.schedule(Math.max(backoffDelay(this.failures, this.host.random), this.retryMs ?? 0));
  }
}

function isEventStream(response: Response): boolean {
  return (response.headers.get('Content-Type') ?? '').toLowerCase().startsWith('text/event-stream');
}
