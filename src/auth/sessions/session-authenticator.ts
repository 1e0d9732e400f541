import { Inject, Injectable, Logger } from '@nestjs/common';
import { CLOCK, Clock } from '../../common/clock';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import { Db, Sql } from '../../database/sql';
import { ChangeFeed, FeedRead } from '../../invalidation/change-feed';
import { InvalidationBus } from '../../invalidation/invalidation-bus';
import { SessionPrincipal } from '../principal';
import { Role, ROLE_PERMISSIONS } from '../roles';
import { TokenMisses } from '../token-misses';
import { csrfTokenOf, generateSessionToken, hashSessionToken, isSessionTokenShaped } from './session-token';
import { SessionChange, SessionRecord, SessionsRepository } from './sessions.repository';

/** A live session as this instance holds it. */
export interface LiveSession {
  readonly sessionId: string;
  readonly userId: string;
  readonly tokenHash: string;
  /** What X-CSRF-Token must equal on a change made with this session. */
  readonly csrfToken: string;
  readonly createdAt: number;
  readonly expiresAt: number;
  /** The latest use known here (clock ms): recorded here, or read from the database. */
  lastUsedAt: number;
  /** When this instance last wrote (or read) the recorded use. */
  recordedAt: number;
  /** When it was read from the database (process time, ms): paces re-reads for an organization it lacks. */
  readonly loadedAt: number;
  readonly roles: ReadonlyMap<string, Role>;
  /** One principal per organization, made on first use: a request allocates none. */
  readonly principals: Map<string, SessionPrincipal>;
}

/** A session just issued: the cookie's token (shown once, never stored) and what sign-in answers. */
export interface IssuedSession {
  token: string;
  sessionId: string;
  csrfToken: string;
  expiresAt: number;
}

/**
 * Resolves session cookies to signed-in users and their principals, as ApiKeyAuthenticator does keys: from memory on
 * the steady path. A session is read from the database the first time this instance sees its cookie (one indexed
 * read; tokens that cannot be one are refused without it, and a token found dead is remembered as such for a while),
 * then held until it ends. What ends it or changes it reaches every instance:
 * - logout, a password change and a deleted user end sessions; a membership that starts, ends or changes role changes
 *   the user's permissions: whoever commits such a change publishes it on the invalidation bus (`session` with the
 *   session's id, `user` with the user's), which tells this instance at once and every other within its delay (well
 *   under a second);
 * - the change feed reads the same changes from the database every ChangeFeed.PERIOD_MS, for a message the bus lost.
 * Expiry needs no message: a session ends SESSION_MAX_HOURS after sign-in, and SESSION_IDLE_MINUTES after its last
 * use, which each instance records at most once a minute (so idle expiry is exact to a minute across instances);
 * before calling a session idle, an instance reads the use the others recorded.
 */
@Injectable()
export class SessionAuthenticator {
  static readonly MAX_CACHED = 100_000;
  static readonly RECORD_USE_EVERY_MS = 60_000;
  /** A member of an organization this instance has not seen them join is re-read at most this often. */
  static readonly RELOAD_SPACING_MS = 1_000;

  private readonly logger = new Logger(SessionAuthenticator.name);
  private readonly byHash = new Map<string, LiveSession>();
  private readonly byId = new Map<string, LiveSession>();
  private readonly byUser = new Map<string, Set<LiveSession>>();
  private readonly loading = new Map<string, Promise<LiveSession | null>>();
  private readonly misses = new TokenMisses();
  private readonly listeners: ((change: SessionChange | null) => void)[] = [];
  /** Counts drops: a read that was in flight while something was dropped may hold what was dropped, and is not kept. */
  private drops = 0;

  constructor(
    private readonly sql: Sql,
    private readonly sessions: SessionsRepository,
    private readonly bus: InvalidationBus,
    feed: ChangeFeed,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    feed.register<SessionChange>({ sql: SessionsRepository.CHANGED_SINCE, apply: (changes, read) => this.applyRead(changes, read) });
    bus.subscribe('session', (sessionId) => this.dropSession(sessionId));
    bus.subscribe('user', (userId) => this.dropUser(userId));
  }

  /** Sessions held here, for tests and the metric. */
  get size(): number {
    return this.byHash.size;
  }

  /**
   * Hears what may have ended a session or a membership, from the bus and from the change feed's reads alike (a message
   * the bus lost included): `{sessionId}`, a session that ended; `{userId}`, a user whose memberships changed or who was
   * deleted; null, anything at all (a full read). Open streams follow their session by it (session-streams.ts).
   */
  onChange(listener: (change: SessionChange | null) => void): void {
    this.listeners.push(listener);
  }

  /** The session as this instance holds it now, if it does (nothing dropped it since it was read). */
  held(sessionId: string): LiveSession | undefined {
    return this.byId.get(sessionId);
  }

  /**
   * The live session of a cookie's token, or null: unknown, ended, or expired (idle or past its lifetime). With
   * `use: false` (a stream opening: the browser reconnects it by itself) it is not recorded as a use, so a forgotten tab
   * lets its session go idle.
   */
  async session(token: string, { use = true }: { use?: boolean } = {}): Promise<LiveSession | null> {
    if (!isSessionTokenShaped(token)) return null;
    const tokenHash = hashSessionToken(token);
    let session = this.byHash.get(tokenHash) ?? (await this.load(tokenHash, token));
    if (session === null) return null;
    const now = this.clock.now();
    if (now >= session.expiresAt) return this.expire(session);
    if (now - session.lastUsedAt >= this.config.sessions.idleMs) {
      // Idle as far as this instance knows: another may have served it since.
      session = await this.reload(session, token);
      if (session === null) return null;
      if (now - session.lastUsedAt >= this.config.sessions.idleMs) return this.expire(session);
    }
    if (use && now - session.recordedAt >= SessionAuthenticator.RECORD_USE_EVERY_MS) this.recordUse(session, now);
    return session;
  }

  /**
   * The session's principal in `organizationId`, or null when the user is not a member of it. A membership this
   * instance does not know of yet (granted a moment ago, elsewhere) is looked for again, at most once a RELOAD_SPACING_MS.
   */
  async principal(session: LiveSession, token: string, organizationId: string): Promise<SessionPrincipal | null> {
    let current: LiveSession | null = session;
    if (!current.roles.has(organizationId) && performance.now() - current.loadedAt >= SessionAuthenticator.RELOAD_SPACING_MS) {
      current = await this.reload(current, token);
    }
    const role = current?.roles.get(organizationId);
    if (current === null || role === undefined) return null;
    let principal = current.principals.get(organizationId);
    if (principal === undefined) {
      principal = { type: 'session', id: current.userId, sessionId: current.sessionId, organizationId, role, permissions: ROLE_PERMISSIONS[role] };
      current.principals.set(organizationId, principal);
    }
    return principal;
  }

  /** A new session for the user (sign-in), in `db` when the sign-in writes more (an accepted invitation). */
  async issue(db: Db, userId: string): Promise<IssuedSession> {
    const token = generateSessionToken();
    const now = this.clock.now();
    const expiresAt = now + this.config.sessions.maxMs;
    const sessionId = await this.sessions.create(db, userId, hashSessionToken(token), now, expiresAt);
    return { token, sessionId, csrfToken: csrfTokenOf(token), expiresAt };
  }

  /** Logout: the session ends here at once (the bus tells this instance too), and on every other within the bus's delay. */
  async end(sessionId: string): Promise<void> {
    await this.sessions.end(this.sql, sessionId);
    this.bus.publish('session', sessionId);
  }

  private load(tokenHash: string, token: string): Promise<LiveSession | null> {
    if (this.misses.has(tokenHash, this.clock.now())) return Promise.resolve(null);
    let loading = this.loading.get(tokenHash);
    if (loading === undefined) {
      loading = this.read(tokenHash, token).finally(() => this.loading.delete(tokenHash));
      this.loading.set(tokenHash, loading);
    }
    return loading;
  }

  private async reload(session: LiveSession, token: string): Promise<LiveSession | null> {
    this.forget(session);
    return this.load(session.tokenHash, token);
  }

  private async read(tokenHash: string, token: string): Promise<LiveSession | null> {
    const drops = this.drops;
    const record = await this.sessions.findLive(this.sql, tokenHash);
    if (record === null) {
      this.misses.remember(tokenHash, this.clock.now());
      return null;
    }
    const session = liveSession(record, tokenHash, csrfTokenOf(token), this.clock.now());
    // Dropped while the read was in flight: what it read may predate the drop. It answers this request (which came
    // first) but is not kept; the next request reads again.
    if (this.drops === drops) this.keep(session);
    return session;
  }

  /** Past its lifetime or idle: ended for every instance, and its token remembered as dead. */
  private async expire(session: LiveSession): Promise<null> {
    this.forget(session);
    this.misses.remember(session.tokenHash, this.clock.now());
    await this.sessions.end(this.sql, session.sessionId).catch((error: unknown) => {
      this.logger.warn(`Could not mark an expired session ended: ${String(error)}`);
    });
    return null;
  }

  private recordUse(session: LiveSession, now: number): void {
    session.recordedAt = now;
    session.lastUsedAt = now;
    this.sessions.recordUse(this.sql, session.sessionId, now).catch((error: unknown) => {
      this.logger.warn(`Could not record a session's use: ${String(error)}`);
    });
  }

  private keep(session: LiveSession): void {
    if (this.byHash.size >= SessionAuthenticator.MAX_CACHED) this.forget(this.byHash.values().next().value as LiveSession);
    this.byHash.set(session.tokenHash, session);
    this.byId.set(session.sessionId, session);
    let ofUser = this.byUser.get(session.userId);
    if (ofUser === undefined) this.byUser.set(session.userId, (ofUser = new Set()));
    ofUser.add(session);
  }

  private forget(session: LiveSession): void {
    if (this.byHash.get(session.tokenHash) !== session) return;
    this.byHash.delete(session.tokenHash);
    this.byId.delete(session.sessionId);
    const ofUser = this.byUser.get(session.userId);
    ofUser?.delete(session);
    if (ofUser?.size === 0) this.byUser.delete(session.userId);
  }

  private dropSession(sessionId: string): void {
    this.drops += 1;
    const session = this.byId.get(sessionId);
    if (session !== undefined) this.forget(session);
    this.tell({ sessionId });
  }

  private dropUser(userId: string): void {
    this.drops += 1;
    for (const session of [...(this.byUser.get(userId) ?? [])]) this.forget(session);
    this.tell({ userId });
  }

  private tell(change: SessionChange | null): void {
    for (const listener of this.listeners) listener(change);
  }

  private applyRead(changes: SessionChange[], read: FeedRead): void {
    if (read.full) {
      this.drops += 1;
      for (const session of [...this.byHash.values()]) this.forget(session);
      this.tell(null);
      return;
    }
    for (const change of changes) {
      if ('sessionId' in change) this.dropSession(change.sessionId);
      else this.dropUser(change.userId);
    }
  }
}

function liveSession(record: SessionRecord, tokenHash: string, csrfToken: string, now: number): LiveSession {
  return {
    sessionId: record.sessionId,
    userId: record.userId,
    tokenHash,
    csrfToken,
    createdAt: record.createdAt,
    expiresAt: record.expiresAt,
    lastUsedAt: record.lastUsedAt,
    // The use just read counts as recorded when it is recent: the next write is due a minute after it.
    recordedAt: Math.min(record.lastUsedAt, now),
    loadedAt: performance.now(),
    roles: new Map(Object.entries(record.roles)),
    principals: new Map(),
  };
}
