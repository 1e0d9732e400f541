import { readCacheFile, writeCacheFile } from './cache-file';
import { ChangeStream } from './change-stream';
import { FlagstoreError, httpError } from './errors';
import { asFlagstoreError, bearer, Fetch, withDeadline } from './http';
import { changedKeys, ConfigPayload, Flag, JsonValue, parseConfigPayload } from './payload';
import { evaluateFlag, EvaluationContext } from './targeting';
import { backoffDelay, DEFAULT_POLL_INTERVAL_SECONDS, parseRetryAfter, pollDelay, retryAfterDelay, Scheduler, systemScheduler } from './timing';

export interface FlagstoreClientOptions {
  /** The service's API base, with its version: `https://flags.example.com/v1`. */
  baseUrl: string;
  /** An API key with FLAGS_READ. */
  apiKey: string;
  /**
   * The attributes flag rules read, for every call: this server's own (`serverId`, `region`, `build`, …). A call's
   * context extends it (a player's `targetingKey`, …), its attributes winning.
   */
  context?: EvaluationContext;
  /** Also listen on GET /flags/config/stream and re-read as soon as the config changes. Default false. */
  stream?: boolean;
  /** Where the last good payload is kept, so a restart while the service is down still has flags. */
  cacheFile?: string;
  /** Default: Node's global fetch. */
  fetch?: Fetch;
  /** What the client waits with (poll interval, backoff, Retry-After, reconnects). Default: Node's timers and Date.now(). */
  scheduler?: Scheduler;
  /** Jitter's source, in [0, 1). Default: Math.random. */
  random?: () => number;
  /** A config request (or the opening of the stream) that takes longer fails as `timeout`. Default 10 000. */
  requestTimeoutMs?: number;
  /** An open stream that sends nothing (not even its keep-alive comment) for this long is dropped. Default 45 000. */
  streamSilenceTimeoutMs?: number;
}

export interface FlagstoreClientEvents {
  /** The keys whose value, type, runtime or rules changed, or that were added or removed, sorted. Not fired for the first load. */
  change: (keys: string[]) => void;
  error: (error: FlagstoreError) => void;
}

type FlagValueType = 'boolean' | 'string' | 'number' | 'json';

const WHAT = 'GET /flags/config';

type ReadOutcome =
  { kind: 'payload'; payload: ConfigPayload } | { kind: 'unchanged' } | { kind: 'failed'; error: FlagstoreError; retryAfterMs?: number };

/**
 * Serves a Flagstore organization's flags to a game server from memory, and keeps them current: it polls
 * GET /flags/config with If-None-Match every pollIntervalSeconds (±10 %), or, with `stream: true`, re-reads when
 * the change stream says so and polls only while the stream is down. Through an outage it keeps the last good
 * payload (and the cache file keeps it across restarts). A 401 or 403 stops it for good.
 */
export class FlagstoreClient {
  private readonly configUrl: string;
  private readonly apiKey: string;
  private readonly fetch: Fetch;
  private readonly scheduler: Scheduler;
  private readonly random: () => number;
  private readonly requestTimeoutMs: number;
  private readonly cacheFile: string | undefined;
  private readonly stream: ChangeStream | undefined;
  private readonly context: EvaluationContext;

  private payload: ConfigPayload | undefined;
  private flags: ReadonlyMap<string, Flag> = new Map();
  private persistedEtag: string | undefined;
  private cacheWrites: Promise<void> = Promise.resolve();

  private readonly readyPromise: Promise<void>;
  private settleReady!: { resolve: () => void; reject: (error: FlagstoreError) => void };
  private readySettled = false;

  private readonly listeners: { [E in keyof FlagstoreClientEvents]: Set<FlagstoreClientEvents[E]> } = {
    change: new Set(),
    error: new Set(),
  };

  private pollTimer: { handle: unknown } | undefined;
  /** Failed reads in a row (network, timeout, 5xx, unexpected answers): the backoff's exponent. */
  private failures = 0;
  /** A 429's Retry-After: no request, poll or stream, before this scheduler time. */
  private holdUntil = 0;
  private reading: Promise<void> | undefined;
  private readAgain = false;
  private lastAnnounced: string | undefined;
  private streamOpen = false;
  private readonly inFlight = new Set<AbortController>();
  /** After a 401/403, or close(): no request is ever sent again. */
  private stopped = false;
  private closed = false;

  constructor(options: FlagstoreClientOptions) {
    if (typeof options.apiKey !== 'string' || options.apiKey === '') throw new TypeError('FlagstoreClient: apiKey is required');
    const baseUrl = new URL(options.baseUrl).href.replace(/\/+$/, '');
    this.configUrl = `${baseUrl}/flags/config`;
    this.apiKey = options.apiKey;
    this.context = Object.freeze({ ...options.context });
    this.fetch = options.fetch ?? ((url, init) => globalThis.fetch(url, init));
    this.scheduler = options.scheduler ?? systemScheduler;
    this.random = options.random ?? Math.random;
    this.requestTimeoutMs = options.requestTimeoutMs ?? 10_000;
    this.cacheFile = options.cacheFile;
    this.readyPromise = new Promise<void>((resolve, reject) => (this.settleReady = { resolve, reject }));
    // ready() is optional: a rejection nobody asked for must not end the process as an unhandled one.
    this.readyPromise.catch(() => undefined);
    if (options.stream) {
      this.stream = new ChangeStream({
        url: `${this.configUrl}/stream`,
        apiKey: this.apiKey,
        fetch: this.fetch,
        scheduler: this.scheduler,
        random: this.random,
        requestTimeoutMs: this.requestTimeoutMs,
        silenceTimeoutMs: options.streamSilenceTimeoutMs ?? 45_000,
        currentEtag: () => this.payload?.etag,
        heldUntil: () => this.holdUntil,
        opened: () => this.streamOpened(),
        announced: (etag) => this.announced(etag),
        dropped: () => this.streamDropped(),
        failed: (error, retryAfterMs) => this.streamFailed(error, retryAfterMs),
      });
    }
    void this.start();
  }

  /**
   * Resolves once the client has flags to serve: from the service, or, when the service cannot be reached, from
   * the cache file. Rejects when there is neither (the client keeps retrying, and emits `change` with every key
   * when it first gets them), on a 401 or 403 (it has stopped), or on close() before either.
   */
  ready(): Promise<void> {
    return this.readyPromise;
  }

  /**
   * A `boolean` flag's value for the context (the client's default context extended by `context`): the first of its
   * rules whose conditions all hold, else its value. Unknown keys and flags of another type give the fallback.
   */
  getBoolean(key: string, fallback: boolean, context?: EvaluationContext): boolean {
    return this.valueOf(key, 'boolean', fallback, context);
  }

  getString(key: string, fallback: string, context?: EvaluationContext): string {
    return this.valueOf(key, 'string', fallback, context);
  }

  getNumber(key: string, fallback: number, context?: EvaluationContext): number {
    return this.valueOf(key, 'number', fallback, context);
  }

  /** A `json` flag's value (frozen; its shape is not checked against T). Flags of other types give the fallback. */
  getJson<T = JsonValue>(key: string, fallback: T, context?: EvaluationContext): T {
    return this.valueOf(key, 'json', fallback, context);
  }

  /** Every flag's value for the context, as `{key: value}`, `server` ones included: for the server's own use, never for players. */
  all(context?: EvaluationContext): Record<string, JsonValue> {
    const merged = this.contextWith(context);
    return Object.fromEntries([...this.flags.values()].map((flag) => [flag.key, evaluateFlag(flag, merged).value]));
  }

  /**
   * Only the `shared` flags, as `{key: value}`, resolved for the context (a player's `targetingKey` and attributes):
   * what a server may relay to that player. Never the rules themselves.
   */
  clientSafe(context?: EvaluationContext): Record<string, JsonValue> {
    const merged = this.contextWith(context);
    return Object.fromEntries(
      [...this.flags.values()].filter((flag) => flag.runtime === 'shared').map((flag) => [flag.key, evaluateFlag(flag, merged).value]),
    );
  }

  on<E extends keyof FlagstoreClientEvents>(event: E, listener: FlagstoreClientEvents[E]): this {
    this.listeners[event].add(listener);
    return this;
  }

  off<E extends keyof FlagstoreClientEvents>(event: E, listener: FlagstoreClientEvents[E]): this {
    this.listeners[event].delete(listener);
    return this;
  }

  /** Stops polling and the stream, aborts what is in flight, and resolves once the cache file is written. */
  async close(): Promise<void> {
    if (!this.closed) {
      this.closed = true;
      this.stop();
      this.rejectReady(new FlagstoreError('closed', 'the client was closed before it was ready'));
    }
    await this.cacheWrites;
  }

  private async start(): Promise<void> {
    if (this.cacheFile !== undefined) await this.loadCache(this.cacheFile);
    if (this.stopped) return;
    await this.read();
    if (!this.stopped) this.stream?.start();
  }

  private async loadCache(path: string): Promise<void> {
    try {
      const cached = await readCacheFile(path);
      if (cached === undefined || this.payload !== undefined) return;
      this.use(cached);
      this.persistedEtag = cached.etag;
    } catch (error) {
      this.emit('error', new FlagstoreError('cache', `the cache file ${path} could not be read: ${(error as Error).message}`, { cause: error }));
    }
  }

  private valueOf<T>(key: string, type: FlagValueType, fallback: T, context: EvaluationContext | undefined): T {
    const flag = this.flags.get(key);
    if (flag === undefined || flag.type !== type) return fallback;
    // parseConfigPayload checked that every value, the rules' included, matches its flag's type.
    return (flag.rules === undefined ? flag.value : evaluateFlag(flag, this.contextWith(context)).value) as T;
  }

  private contextWith(context: EvaluationContext | undefined): EvaluationContext {
    return context === undefined ? this.context : { ...this.context, ...context };
  }

  /** Reads the config now. A read under way is shared; a change announced meanwhile is read right after it. */
  private read(): Promise<void> {
    if (this.stopped) return Promise.resolve();
    if (this.reading) {
      this.readAgain = true;
      return this.reading;
    }
    const held = this.holdUntil - this.scheduler.now();
    if (held > 0) {
      if (this.pollTimer === undefined) this.schedulePoll(held);
      return Promise.resolve();
    }
    this.cancelPoll();
    this.reading = this.readOnce().then((succeeded) => {
      this.reading = undefined;
      const again = this.readAgain;
      this.readAgain = false;
      // A failed read has its retry scheduled already; reading again at once would skip the backoff.
      if (again && succeeded && (this.lastAnnounced === undefined || this.lastAnnounced !== this.payload?.etag)) void this.read();
    });
    return this.reading;
  }

  /** One request and what follows from its answer; true when it brought a payload or confirmed the one held. */
  private async readOnce(): Promise<boolean> {
    const outcome = await this.requestConfig();
    if (this.stopped) return false;
    if (outcome.kind === 'failed') {
      this.readFailed(outcome.error, outcome.retryAfterMs);
      return false;
    }
    this.failures = 0;
    const changed = outcome.kind === 'payload' ? this.use(outcome.payload) : [];
    if (outcome.kind === 'payload') this.persist(outcome.payload);
    if (!this.streamOpen) this.schedulePoll(pollDelay(this.payload?.pollIntervalSeconds ?? DEFAULT_POLL_INTERVAL_SECONDS, this.random));
    if (!this.readySettled) this.resolveReady();
    else if (changed.length > 0) this.emit('change', changed);
    return true;
  }

  private async requestConfig(): Promise<ReadOutcome> {
    const headers: Record<string, string> = { ...bearer(this.apiKey), Accept: 'application/json' };
    // The service's validator is weak (W/"<etag>"); sending it back exactly as served is what it matches fastest.
    if (this.payload !== undefined) headers['If-None-Match'] = `W/"${this.payload.etag}"`;
    const controller = new AbortController();
    this.inFlight.add(controller);
    try {
      const exchange = async () => {
        const response = await this.fetch(this.configUrl, { headers, signal: controller.signal });
        return { response, body: await response.text() };
      };
      const { response, body } = await withDeadline(exchange(), controller, this.requestTimeoutMs, WHAT);
      if (response.status === 304 && this.payload !== undefined) return { kind: 'unchanged' };
      if (response.status === 200) {
        try {
          return { kind: 'payload', payload: parseConfigPayload(JSON.parse(body)) };
        } catch (error) {
          const message = `${WHAT} answered 200 with a body that is not a config payload: ${(error as Error).message}`;
          return { kind: 'failed', error: new FlagstoreError('invalid-payload', message, { status: 200, cause: error }) };
        }
      }
      const retryAfterMs = parseRetryAfter(response.headers.get('Retry-After'), this.scheduler.now());
      const retryAfterSeconds = retryAfterMs === undefined ? undefined : Math.ceil(retryAfterMs / 1000);
      return { kind: 'failed', error: httpError(WHAT, response.status, body, retryAfterSeconds), retryAfterMs };
    } catch (error) {
      return { kind: 'failed', error: asFlagstoreError(error, WHAT) };
    } finally {
      this.inFlight.delete(controller);
    }
  }

  private readFailed(error: FlagstoreError, retryAfterMs: number | undefined): void {
    this.emit('error', error);
    if (error.isFatal) {
      this.stop();
      this.rejectReady(error);
      return;
    }
    this.schedulePoll(this.waitAfter(error, retryAfterMs));
    // Through an outage the last good payload keeps serving; at start that is the cache file's, when there is one.
    if (this.payload !== undefined) this.resolveReady();
    else this.rejectReady(error);
  }

  /** How long to wait after a failure: Retry-After for a 429 that names one, else the next backoff step. */
  private waitAfter(error: FlagstoreError, retryAfterMs: number | undefined): number {
    if (error.kind === 'rate-limited' && retryAfterMs !== undefined) {
      this.holdUntil = Math.max(this.holdUntil, this.scheduler.now() + retryAfterMs);
      return retryAfterDelay(retryAfterMs, this.random);
    }
    this.failures += 1;
    const delay = backoffDelay(this.failures, this.random);
    if (error.kind === 'rate-limited') this.holdUntil = Math.max(this.holdUntil, this.scheduler.now() + delay);
    return delay;
  }

  /** Makes `next` the payload served; returns the keys that changed. */
  private use(next: ConfigPayload): string[] {
    const flags = new Map(next.flags.map((flag) => [flag.key, flag]));
    const changed = changedKeys(this.flags, flags);
    this.payload = next;
    this.flags = flags;
    return changed;
  }

  private persist(payload: ConfigPayload): void {
    const path = this.cacheFile;
    if (path === undefined || payload.etag === this.persistedEtag) return;
    this.persistedEtag = payload.etag;
    // Writes run one after another, so an older payload can never land after a newer one.
    this.cacheWrites = this.cacheWrites
      .then(() => writeCacheFile(path, payload))
      .catch((error: unknown) =>
        this.emit('error', new FlagstoreError('cache', `the cache file ${path} could not be written: ${(error as Error).message}`, { cause: error })),
      );
  }

  private schedulePoll(delayMs: number): void {
    this.cancelPoll();
    if (this.stopped) return;
    const timer = {
      handle: this.scheduler.setTimeout(() => {
        if (this.pollTimer === timer) this.pollTimer = undefined;
        void this.read();
      }, delayMs),
    };
    this.pollTimer = timer;
  }

  private cancelPoll(): void {
    if (this.pollTimer !== undefined) this.scheduler.clearTimeout(this.pollTimer.handle);
    this.pollTimer = undefined;
  }

  private streamOpened(): void {
    this.streamOpen = true;
    // While the stream is up, events bring changes; a retry after a failure stays scheduled.
    if (this.failures === 0 && this.holdUntil <= this.scheduler.now()) this.cancelPoll();
  }

  private streamDropped(): void {
    this.streamOpen = false;
    if (this.pollTimer === undefined && this.reading === undefined && !this.stopped) {
      this.schedulePoll(pollDelay(this.payload?.pollIntervalSeconds ?? DEFAULT_POLL_INTERVAL_SECONDS, this.random));
    }
  }

  private announced(etag: string | undefined): void {
    this.lastAnnounced = etag;
    if (etag !== undefined && etag === this.payload?.etag) return;
    void this.read();
  }

  private streamFailed(error: FlagstoreError, retryAfterMs: number | undefined): void {
    this.emit('error', error);
    if (error.isFatal) return this.stop();
    if (error.kind === 'rate-limited' && retryAfterMs !== undefined) {
      this.holdUntil = Math.max(this.holdUntil, this.scheduler.now() + retryAfterMs);
    }
  }

  private stop(): void {
    this.stopped = true;
    this.cancelPoll();
    this.stream?.close();
    for (const controller of this.inFlight) controller.abort(new FlagstoreError('closed', 'the client stopped'));
    this.inFlight.clear();
  }

  private resolveReady(): void {
    if (this.readySettled) return;
    this.readySettled = true;
    this.settleReady.resolve();
  }

  private rejectReady(error: FlagstoreError): void {
    if (this.readySettled) return;
    this.readySettled = true;
    this.settleReady.reject(error);
  }

  private emit<E extends keyof FlagstoreClientEvents>(event: E, ...args: Parameters<FlagstoreClientEvents[E]>): void {
    for (const listener of [...this.listeners[event]]) {
      try {
        (listener as (...values: Parameters<FlagstoreClientEvents[E]>) => void)(...args);
      } catch (error) {
        // A listener's own bug surfaces as it would from an EventEmitter, without breaking the client's schedule.
        queueMicrotask(() => {
          throw error;
        });
      }
    }
  }
}
