import type { ServerResponse } from 'node:http';
import { BeforeApplicationShutdown, Injectable, Logger, OnApplicationShutdown, Optional } from '@nestjs/common';
import { InvalidationBus } from '../../common/invalidation-bus';
import { Metrics } from '../../metrics/metrics';
import { Principal } from '../../auth/principal';
import { ConfigPayload } from '../config-payload';
import { FlagConfigCache } from '../flag-config.cache';

/** A comment line this often keeps proxies (nginx reads for 60 s) and load balancers from closing a quiet stream. */
export const HEARTBEAT_MS = 15_000;
/** A stream ends after this, with a `retry:` hint: connections move between instances as they come and go. */
export const STREAM_LIFETIME_MS = 10 * 60_000;
/** Open streams per key on one instance; the next is refused with 429. */
export const MAX_STREAMS_PER_KEY = 20;
/** The reconnect delay a closing stream suggests: this, plus up to as much again at random, so clients spread out. */
const RETRY_BASE_MS = 1_000;

interface OpenStream {
  response: ServerResponse;
  organizationId: string;
  keyId: string;
  openedAt: number;
  /** The ETag of the last event sent: a change that leaves the payload's ETag as it was sends nothing. */
  etag: string | null;
}

/**
 * The open change streams of this instance, by organization and by key. A committed change reaches every
 * instance through the invalidation bus (as it reaches the config caches); here it rebuilds the organization's
 * payload once (the cache shares the build with the polls) and writes one small event to each of the
 * organization's streams, so a stream costs no database work per event. One timer serves every stream: the
 * heartbeat, and the end of streams past their lifetime. A revoked key's streams end at once.
 */
@Injectable()
export class ConfigStreamHub implements BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly logger = new Logger(ConfigStreamHub.name);
  private readonly byOrganization = new Map<string, Set<OpenStream>>();
  private readonly byKey = new Map<string, Set<OpenStream>>();
  private readonly timer: NodeJS.Timeout;
  private closing = false;

  constructor(
    private readonly cache: FlagConfigCache,
    bus: InvalidationBus,
    @Optional() private readonly metrics?: Metrics,
  ) {
    bus.subscribe('flags', (organizationId) => void this.changed(organizationId));
    bus.subscribe('apiKey', (keyId) => this.closeKey(keyId));
    // Messages may have been missed: every organization with streams gets the current ETag (sent only if new).
    bus.onReset(() => {
      for (const organizationId of this.byOrganization.keys()) void this.changed(organizationId);
    });
    this.timer = setInterval(() => this.beat(), HEARTBEAT_MS);
    this.timer.unref();
  }

  get size(): number {
    let count = 0;
    for (const streams of this.byKey.values()) count += streams.size;
    return count;
  }

  /** True once shutdown began: new streams go to another instance. */
  get isClosing(): boolean {
    return this.closing;
  }

  hasRoomFor(keyId: string): boolean {
    return (this.byKey.get(keyId)?.size ?? 0) < MAX_STREAMS_PER_KEY;
  }

  /**
   * Answers the request with a stream: the event for the current ETag at once, unless the client says it has
   * it (`Last-Event-ID`), then one event per change. `payload` is the organization's current one, read before
   * anything was sent so that a database fault is still an ordinary error answer.
   */
  open(principal: Principal, response: ServerResponse, payload: ConfigPayload, lastEventId: string | undefined): void {
    const stream: OpenStream = {
      response,
      organizationId: principal.organizationId,
      keyId: principal.keyId,
      openedAt: Date.now(),
      etag: lastEventId ?? null,
    };
    response.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache',
      // nginx passes events on as they come (it would buffer them otherwise).
      'X-Accel-Buffering': 'no',
    });
    response.socket?.setNoDelay(true);
    // Headers go out now, so a client sees the stream open even when no event is due.
    response.flushHeaders();
    this.add(stream);
    response.once('close', () => this.remove(stream));
    this.send(stream, payload);
  }

  /** Ends every stream with a `retry:` hint: shutdown (SIGTERM), so clients reconnect to another instance. */
  closeAll(): void {
    this.closing = true;
    for (const streams of [...this.byKey.values()]) for (const stream of [...streams]) this.end(stream);
  }

  beforeApplicationShutdown(): void {
    this.closeAll();
  }

  onApplicationShutdown(): void {
    clearInterval(this.timer);
  }

  private async changed(organizationId: string): Promise<void> {
    if (!this.byOrganization.has(organizationId)) return;
    let payload: ConfigPayload;
    try {
      payload = await this.cache.get(organizationId);
    } catch (error) {
      // No payload (the database is away and none was built): the streams hear of it with the next change.
      this.logger.warn(`Could not rebuild the config of organization ${organizationId} for its streams: ${String(error)}`);
      return;
    }
    for (const stream of this.byOrganization.get(organizationId) ?? []) this.send(stream, payload);
  }

  private send(stream: OpenStream, payload: ConfigPayload): void {
    if (stream.etag === payload.etag) return;
    stream.etag = payload.etag;
    const data = JSON.stringify({ type: 'refetchEvaluation', etag: payload.etag, lastModified: Math.floor(payload.builtAt / 1000) });
    stream.response.write(`id: ${payload.etag}\nevent: message\ndata: ${data}\n\n`);
  }

  /** The heartbeat, and the end of streams past their lifetime as of `now` (tests pass a later time). */
  beat(now = Date.now()): void {
    const expired = now - STREAM_LIFETIME_MS;
    for (const streams of [...this.byKey.values()]) {
      for (const stream of [...streams]) {
        if (stream.openedAt <= expired) this.end(stream);
        else stream.response.write(': keep-alive\n\n');
      }
    }
  }

  private closeKey(keyId: string): void {
    for (const stream of [...(this.byKey.get(keyId) ?? [])]) this.end(stream);
  }

  private end(stream: OpenStream): void {
    this.remove(stream);
    const retry = RETRY_BASE_MS + Math.floor(Math.random() * RETRY_BASE_MS);
    stream.response.end(`retry: ${retry}\n\n`);
  }

  private add(stream: OpenStream): void {
    const add = (map: Map<string, Set<OpenStream>>, id: string) => {
      const set = map.get(id) ?? new Set<OpenStream>();
      set.add(stream);
      map.set(id, set);
    };
    add(this.byOrganization, stream.organizationId);
    add(this.byKey, stream.keyId);
    this.metrics?.streamConnections.inc();
  }

  private remove(stream: OpenStream): void {
    const remove = (map: Map<string, Set<OpenStream>>, id: string): boolean => {
      const set = map.get(id);
      if (!set?.delete(stream)) return false;
      if (set.size === 0) map.delete(id);
      return true;
    };
    remove(this.byOrganization, stream.organizationId);
    if (remove(this.byKey, stream.keyId)) this.metrics?.streamConnections.dec();
  }
}
