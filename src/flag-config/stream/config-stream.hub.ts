import type { ServerResponse } from 'node:http';
import { BeforeApplicationShutdown, Inject, Injectable, Logger, OnApplicationShutdown, Optional } from '@nestjs/common';
import { CLOCK, Clock, ClockTimer } from '../../common/clock';
import { ApiKeyAuthenticator } from '../../auth/api-key-authenticator';
import { SessionStreams } from '../../auth/sessions/session-streams';
import { FlagConfigMetrics } from '../flag-config.metrics';
import { Principal } from '../../auth/principal';
import { ConfigPayload } from '../config-payload';
import { FlagConfigCache } from '../flag-config.cache';
import { HEARTBEAT_FRAME, retryFrame, SSE_HEADERS } from '../../http/sse-frames';
import { eventFrame } from './sse-frames';
import { OpenStream, OpenStreams } from './open-streams';
import { FanOuts, writeInSlices } from './stream-fan-out';
import { dueOf, startTicking } from '../../http/stream-heartbeats';
import { SlotReservations, StreamSlot } from './slot-reservations';
import { StreamSlots } from './stream-slots';

export { STREAM_LIFETIME_MS } from '../../http/sse-frames';
export { HEARTBEAT_MS } from '../../http/stream-heartbeats';
export { MAX_STREAMS_PER_KEY } from './slot-reservations';
export type { StreamSlot } from './slot-reservations';

/**
 * The open change streams of this instance (open-streams.ts), and the one way in to them for the controller,
 * shutdown and tests. A committed change reaches every instance's config cache (by the invalidation bus, or the
 * change feed when a message was lost), which tells the hub; here it rebuilds the organization's payload once (the cache shares the build with the polls),
 * and the one event it makes is written to each of the organization's streams, a slice at a time
 * (stream-fan-out.ts): a stream costs no database work per event, and a fan-out to thousands of streams never
 * stalls the polls. One timer of the app's clock serves every stream (stream-heartbeats.ts): the heartbeats
 * (each stream's own, 15 s after its last write, so they spread out), and the end of streams past their
 * lifetime. The per-key cap is slot-reservations.ts; the text written, sse-frames.ts. A revoked key's streams
 * end at once; a stream opened with a session ends with it, or when its person leaves the organization
 * (SessionStreams, which the organization event stream shares).
 */
@Injectable()
export class ConfigStreamHub implements BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly logger = new Logger(ConfigStreamHub.name);
  private readonly streams = new OpenStreams();
  private readonly fanOuts = new FanOuts();
  private readonly reservations: SlotReservations;
  private readonly timer: ClockTimer;
  private closing = false;

  constructor(
    private readonly cache: FlagConfigCache,
    slots: StreamSlots,
    authenticator: ApiKeyAuthenticator,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly sessions: SessionStreams,
    @Optional() private readonly metrics?: FlagConfigMetrics,
  ) {
    this.reservations = new SlotReservations(slots, this.logger, (keyId) => this.streams.countOfKey(keyId), clock.now());
    // Every change the cache hears of (from the bus or the change feed); null: every organization's streams get the
    // current ETag (sent only if new).
    cache.onInvalidate((organizationId) => {
      if (organizationId !== null) return void this.changed(organizationId);
      for (const organization of this.streams.organizations()) void this.changed(organization);
    });
    authenticator.onRevoked((keyId) => this.closeKey(keyId));
    this.timer = startTicking(clock, () => this.beat());
  }

  /** Open streams on this instance. */
  get size(): number {
    return this.streams.size;
  }

  /** True once shutdown began: new streams go to another instance. */
  get isClosing(): boolean {
    return this.closing;
  }

  /** A place for one more stream of this key, or null when the key is at its cap (SlotReservations.reserve). */
  reserve(keyId: string): Promise<StreamSlot | null> {
    return this.reservations.reserve(keyId, this.clock.now());
  }

  /**
   * Answers the request with a stream, in the slot reserved for it: the event for the current ETag at once,
   * unless the client says it has it (`Last-Event-ID`), then one event per change. `payload` is the
   * organization's current one, read before anything was sent so that a database fault is still an ordinary
   * error answer.
   */
  open(principal: Principal, response: ServerResponse, payload: ConfigPayload, lastEventId: string | undefined, slot: StreamSlot): void {
    const now = this.clock.now();
    const stream: OpenStream = {
      response,
      organizationId: principal.organizationId,
      keyId: principal.id,
      openedAt: now,
      wroteAt: now,
      etag: lastEventId ?? null,
      slotId: slot.id,
    };
    response.writeHead(200, SSE_HEADERS);
    response.socket?.setNoDelay(true);
    // Headers go out now, so a client sees the stream open even when no event is due.
    response.flushHeaders();
    this.add(stream);
    // Counted among the key's open streams from now on, and by its row until it ends.
    slot.keep();
    if (principal.type === 'session') stream.unwatch = this.sessions.watch(principal, () => this.end(stream));
    response.once('close', () => this.remove(stream));
    if (stream.etag !== payload.etag) this.write(stream, eventFrame(payload), payload.etag);
  }

  /** Ends every stream with a `retry:` hint: shutdown (SIGTERM), so clients reconnect to another instance. */
  closeAll(): void {
    this.closing = true;
    for (const stream of this.streams.all()) this.end(stream);
  }

  /** Ends every stream, then gives back this instance's slots at once, rather than when their rows expire. */
  async beforeApplicationShutdown(): Promise<void> {
    this.closeAll();
    await this.reservations.releaseAll();
  }

  onApplicationShutdown(): void {
    this.timer.stop();
  }

  /** Heartbeats due and the end of streams past their lifetime, as of the clock's time (what its timer runs). */
  beat(): void {
    const now = this.clock.now();
    this.reservations.renewIfDue(now, !this.streams.isEmpty);
    for (const stream of this.streams.all()) {
      const due = dueOf(stream, now);
      if (due === 'end') this.end(stream);
      else if (due === 'heartbeat') {
        stream.wroteAt = now;
        stream.response.write(HEARTBEAT_FRAME);
      }
    }
  }

  private async changed(organizationId: string): Promise<void> {
    if (!this.streams.hasOrganization(organizationId)) return;
    const isCurrent = this.fanOuts.begin(organizationId);
    let payload: ConfigPayload;
    try {
      payload = await this.cache.get(organizationId);
    } catch (error) {
      // No payload (the database is away and none was built): the streams hear of it with the next change.
      this.logger.warn(`Could not rebuild the config of organization ${organizationId} for its streams: ${String(error)}`);
      return;
    }
    const { etag } = payload;
    const event = eventFrame(payload);
    await writeInSlices(this.streams.ofOrganization(organizationId), isCurrent, (stream) => {
      if (stream.etag !== etag && !stream.response.writableEnded) this.write(stream, event, etag);
    });
  }

  private write(stream: OpenStream, event: Buffer, etag: string): void {
    stream.etag = etag;
    stream.wroteAt = this.clock.now();
    stream.response.write(event);
  }

  private closeKey(keyId: string): void {
    for (const stream of this.streams.ofKey(keyId)) this.end(stream);
  }

  private end(stream: OpenStream): void {
    this.remove(stream);
    stream.response.end(retryFrame());
  }

  private add(stream: OpenStream): void {
    this.streams.add(stream);
    this.metrics?.streamConnections.inc();
  }

  private remove(stream: OpenStream): void {
    const { removed, lastOfOrganization } = this.streams.remove(stream);
    if (lastOfOrganization) this.fanOuts.forget(stream.organizationId);
    if (removed) {
      stream.unwatch?.();
      this.metrics?.streamConnections.dec();
      // At shutdown one statement gives back every slot of this instance.
      if (stream.slotId !== undefined && !this.closing) this.reservations.free(stream.keyId, stream.slotId);
    }
  }
}
