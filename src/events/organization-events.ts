import type { ServerResponse } from 'node:http';
import { HttpStatus, Inject, Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { CLOCK, Clock, ClockTimer } from '../common/clock';
import { DomainError } from '../common/domain-error';
import { HEARTBEAT_FRAME, retryFrame, SSE_HEADERS } from '../http/sse-frames';
import { dueOf, startTicking } from '../http/stream-heartbeats';
import { InvalidationBus } from '../invalidation/invalidation-bus';
import { SessionStreams } from '../auth/sessions/session-streams';
import { SessionPrincipal } from '../auth/principal';

/**
 * What changed in an organization, for the people watching it in the console (decisions.md, "Console"): notifications
 * only; the console reads what changed through the API.
 * - `flags`: after every committed flag change, whatever field changed, with the flags' ids (a deleted flag's too);
 * - `storage`: after every completed upload, delete and purge, with the items' ids;
 * - `review-setting`: after every committed change of the review setting, with the history entry's id;
 * - `change-requests`: after every change of a change request, with the requests' ids.
 */
export type OrganizationEvent =
  | { type: 'flags'; flagIds: string[] }
  | { type: 'storage'; ids: string[]; change: 'uploaded' | 'deleted' | 'purged' }
  | { type: 'review-setting'; id: string }
  /** After every change of a change request (opened, edited, reviewed, withdrawn, applied, failed), with its id. */
  | { type: 'change-requests'; ids: string[] };

/** Ids per bus message: PostgreSQL's NOTIFY takes 8,000 bytes, and 100 UUIDs fit well inside. */
const IDS_PER_MESSAGE = 100;
/** Event streams one person may hold open on one instance (tabs, windows). */
export const MAX_EVENT_STREAMS_PER_USER = 10;

interface EventStream {
  organizationId: string;
  userId: string;
  response: ServerResponse;
  openedAt: number;
  wroteAt: number;
  /** Stops following the session (SessionStreams.watch). */
  unwatch: () => void;
}

interface BusEvent {
  organizationId: string;
  event: OrganizationEvent;
}

/**
 * The organization event stream, GET /v1/events: every instance hears every event through the invalidation bus (its
 * own included) and writes it to the streams it holds, so a change made anywhere reaches every console within the
 * bus's delay. Streams share the change stream's framing, keep-alive and lifetime (http/sse-frames.ts,
 * http/stream-heartbeats.ts). A stream closes when its session ends for any reason or its person leaves the organization
 * (SessionStreams, which the config stream shares; the browser reconnects, and is authenticated again), at the end of
 * its lifetime, and at shutdown.
 */
@Injectable()
export class OrganizationEvents implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(OrganizationEvents.name);
  private readonly streams = new Set<EventStream>();
  private timer?: ClockTimer;

  constructor(
    private readonly bus: InvalidationBus,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly sessions: SessionStreams,
  ) {}

  onModuleInit(): void {
    this.bus.subscribe('event', (raw) => this.deliver(raw));
    // Events lost while this instance was cut off cannot be told apart: the console reads everything again.
    this.bus.onReset(() => this.close(() => true));
    this.timer = startTicking(this.clock, () => this.tick());
  }

  onApplicationShutdown(): void {
    this.timer?.stop();
    this.close(() => true);
  }

  /** Tells every instance's streams of the organization (after the change committed). */
  announce(organizationId: string, event: OrganizationEvent): void {
    if (event.type === 'review-setting') {
      this.bus.publish('event', JSON.stringify({ organizationId, event } satisfies BusEvent));
      return;
    }
    const ids = event.type === 'flags' ? event.flagIds : event.ids;
    if (ids.length === 0) return;
    for (let at = 0; at < ids.length; at += IDS_PER_MESSAGE) {
      const slice = ids.slice(at, at + IDS_PER_MESSAGE);
      const chunk: OrganizationEvent = event.type === 'flags' ? { type: 'flags', flagIds: slice } : { ...event, ids: slice };
      this.bus.publish('event', JSON.stringify({ organizationId, event: chunk } satisfies BusEvent));
    }
  }

  /** Opens a stream for a signed-in member (the route has authenticated them). */
  open(principal: SessionPrincipal, response: ServerResponse): void {
    const mine = [...this.streams].filter((stream) => stream.userId === principal.id).length;
    if (mine >= MAX_EVENT_STREAMS_PER_USER) {
      throw new DomainError(
        HttpStatus.TOO_MANY_REQUESTS,
        'TOO_MANY_STREAMS',
        `At most ${MAX_EVENT_STREAMS_PER_USER} event streams per person are open at once; close another tab of the console`,
      );
    }
    const now = this.clock.now();
    const stream: EventStream = {
      organizationId: principal.organizationId,
      userId: principal.id,
      response,
      openedAt: now,
      wroteAt: now,
      unwatch: () => undefined,
    };
    response.writeHead(200, SSE_HEADERS);
    // The reconnect delay, and a first line so that proxies and the browser see the stream open at once.
    response.write('retry: 2000\n: connected\n\n');
    this.streams.add(stream);
    stream.unwatch = this.sessions.watch(principal, () => this.end(stream));
    response.once('close', () => this.remove(stream));
  }

  /** Open streams on this instance (for tests and metrics). */
  get size(): number {
    return this.streams.size;
  }

  private deliver(raw: string): void {
    let message: BusEvent;
    try {
      message = JSON.parse(raw) as BusEvent;
    } catch {
      this.logger.warn('Ignoring a malformed organization event');
      return;
    }
    const { type, ...data } = message.event;
    const frame = `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
    const now = this.clock.now();
    for (const stream of this.streams) {
      if (stream.organizationId !== message.organizationId) continue;
      stream.response.write(frame);
      stream.wroteAt = now;
    }
  }

  private tick(): void {
    const now = this.clock.now();
    for (const stream of [...this.streams]) {
      const due = dueOf(stream, now);
      if (due === 'end') {
        this.end(stream, retryFrame());
      } else if (due === 'heartbeat') {
        stream.response.write(HEARTBEAT_FRAME);
        stream.wroteAt = now;
      }
    }
  }

  private close(which: (stream: EventStream) => boolean): void {
    for (const stream of [...this.streams]) if (which(stream)) this.end(stream);
  }

  private end(stream: EventStream, last?: string): void {
    this.remove(stream);
    stream.response.end(last);
  }

  private remove(stream: EventStream): void {
    this.streams.delete(stream);
    stream.unwatch();
  }
}
