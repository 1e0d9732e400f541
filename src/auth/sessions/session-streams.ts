import { Inject, Injectable, Logger, OnApplicationShutdown } from '@nestjs/common';
import { CLOCK, Clock, ClockTimer } from '../../common/clock';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import { Sql } from '../../database/sql';
import { SessionPrincipal } from '../principal';
import { SessionAuthenticator } from './session-authenticator';
import { SessionChange, SessionRecord, SessionsRepository } from './sessions.repository';

/** How often the timer looks for sessions past their lifetime or idle. */
export const SESSION_STREAMS_CHECK_MS = 1_000;

/** A stream opened with a session, and how to end it. */
interface WatchedStream {
  readonly sessionId: string;
  readonly userId: string;
  readonly organizationId: string;
  readonly end: () => void;
}

/** When a watched session ends by time: past its lifetime, or idle since its last use (the latest known here). */
interface SessionTimes {
  expiresAt: number;
  lastUsedAt: number;
}

/**
 * The streams opened with a session on this instance (the config stream, GET /v1/events), ended when their session
 * ends for any reason or the membership they were opened in ends (decisions.md, "Trust": "Streams follow the session"):
 * - a session that ended (logout, a password change, a deleted user), as SessionAuthenticator hears of it: from the bus
 *   at once on the instance that ended it and within its delay on the others, or from the change feed's next read when
 *   the bus lost the message;
 * - a user whose memberships changed, or who was deleted: their streams' sessions are read again (one query), and a
 *   stream whose session ended or whose organization the user left ends; the others stay open;
 * - past the session's lifetime or idle: a timer of the app's clock looks every SESSION_STREAMS_CHECK_MS; an idle
 *   session's last use is read again first, since a request on another instance may have used it since. An open
 *   stream is not a use: a forgotten tab's session goes idle, and its streams end with it.
 * A stream ended here is reopened by the browser, and authenticated again.
 */
@Injectable()
export class SessionStreams implements OnApplicationShutdown {
  private readonly logger = new Logger(SessionStreams.name);
  private readonly bySession = new Map<string, Set<WatchedStream>>();
  /** Known for a watched session once it was read (when its stream opened, or again since). */
  private readonly times = new Map<string, SessionTimes>();
  private readonly timer: ClockTimer;
  private checking: Promise<void> | null = null;

  constructor(
    private readonly authenticator: SessionAuthenticator,
    private readonly sessions: SessionsRepository,
    private readonly sql: Sql,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    authenticator.onChange((change) => this.changed(change));
    this.timer = clock.every(SESSION_STREAMS_CHECK_MS, () => void this.check());
  }

  onApplicationShutdown(): void {
    this.timer.stop();
  }

  /** Streams watched on this instance. */
  get size(): number {
    let count = 0;
    for (const streams of this.bySession.values()) count += streams.size;
    return count;
  }

  /**
   * Ends `end`'s stream when the session of `principal` ends or its membership of the principal's organization does;
   * answers what forgets the stream (call it when the stream closes by itself).
   */
  watch(principal: SessionPrincipal, end: () => void): () => void {
    const stream: WatchedStream = { sessionId: principal.sessionId, userId: principal.id, organizationId: principal.organizationId, end };
    let streams = this.bySession.get(stream.sessionId);
    if (streams === undefined) this.bySession.set(stream.sessionId, (streams = new Set()));
    streams.add(stream);
    const live = this.authenticator.held(stream.sessionId);
    if (live !== undefined && live.roles.has(stream.organizationId)) {
      const times = this.times.get(stream.sessionId);
      this.times.set(stream.sessionId, { expiresAt: live.expiresAt, lastUsedAt: Math.max(live.lastUsedAt, times?.lastUsedAt ?? 0) });
    } else {
      // Dropped from memory since the request was authenticated (something changed meanwhile): read it again.
      void this.reread([stream.sessionId]);
    }
    return () => this.forget(stream);
  }

  /** Ends the streams of sessions past their lifetime or idle, as of the clock's time (what the timer runs). */
  check(): Promise<void> {
    this.checking ??= this.checkTimes().finally(() => (this.checking = null));
    return this.checking;
  }

  private async checkTimes(): Promise<void> {
    const now = this.clock.now();
    const idle: string[] = [];
    for (const [sessionId, times] of [...this.times]) {
      if (now >= times.expiresAt) this.endSession(sessionId);
      else if (this.isIdle(sessionId, times, now)) idle.push(sessionId);
    }
    if (idle.length > 0) await this.reread(idle);
  }

  /** Idle as far as this instance knows (its own requests' uses included). */
  private isIdle(sessionId: string, times: SessionTimes, now: number): boolean {
    const live = this.authenticator.held(sessionId);
    if (live !== undefined) times.lastUsedAt = Math.max(times.lastUsedAt, live.lastUsedAt);
    return now - times.lastUsedAt >= this.config.sessions.idleMs;
  }

  private changed(change: SessionChange | null): void {
    if (change === null) void this.reread([...this.bySession.keys()]);
    else if ('sessionId' in change) this.endSession(change.sessionId);
    else void this.reread([...this.bySession.entries()].filter(([, streams]) => ofUser(streams, change.userId)).map(([sessionId]) => sessionId));
  }

  /** Reads the sessions again and ends the streams that no longer hold: the session ended, idle or past its lifetime, or the membership ended. */
  private async reread(sessionIds: string[]): Promise<void> {
    if (sessionIds.length === 0) return;
    let records: SessionRecord[];
    try {
      records = await this.sessions.findLiveByIds(this.sql, sessionIds);
    } catch (error) {
      // The database is away: nothing can be judged now; the timer and the change feed's next read try again.
      this.logger.warn(`Could not read the sessions of open streams: ${String(error)}`);
      return;
    }
    const now = this.clock.now();
    const live = new Map(records.map((record) => [record.sessionId, record]));
    for (const sessionId of sessionIds) {
      const record = live.get(sessionId);
      const known = this.times.get(sessionId);
      const times = record && { expiresAt: record.expiresAt, lastUsedAt: Math.max(record.lastUsedAt, known?.lastUsedAt ?? 0) };
      if (times === undefined || now >= times.expiresAt || now - times.lastUsedAt >= this.config.sessions.idleMs) {
        this.endSession(sessionId);
        continue;
      }
      if (this.bySession.has(sessionId)) this.times.set(sessionId, times);
      for (const stream of [...(this.bySession.get(sessionId) ?? [])]) {
        if (record!.roles[stream.organizationId] === undefined) this.endStream(stream);
      }
    }
  }

  private endSession(sessionId: string): void {
    for (const stream of [...(this.bySession.get(sessionId) ?? [])]) this.endStream(stream);
  }

  private endStream(stream: WatchedStream): void {
    this.forget(stream);
    stream.end();
  }

  private forget(stream: WatchedStream): void {
    const streams = this.bySession.get(stream.sessionId);
    if (!streams?.delete(stream) || streams.size > 0) return;
    this.bySession.delete(stream.sessionId);
    this.times.delete(stream.sessionId);
  }
}

function ofUser(streams: Set<WatchedStream>, userId: string): boolean {
  for (const stream of streams) return stream.userId === userId;
  return false;
}
