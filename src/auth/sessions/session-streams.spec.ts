import type { Clock } from '../../common/clock';
import type { AppConfig } from '../../config/app-config';
import type { Sql } from '../../database/sql';
import type { SessionPrincipal } from '../principal';
import type { LiveSession, SessionAuthenticator } from './session-authenticator';
import { SessionStreams } from './session-streams';
import type { SessionChange, SessionRecord, SessionsRepository } from './sessions.repository';

const MINUTE = 60_000;
const IDLE = 30 * MINUTE;

describe('SessionStreams', () => {
  let now: number;
  let held: Map<string, Partial<LiveSession>>;
  let rows: Map<string, SessionRecord>;
  let reads: string[][];
  let failing: boolean;
  let tell: (change: SessionChange | null) => void;
  let streams: SessionStreams;

  beforeEach(() => {
    now = 1_000_000_000_000;
    held = new Map();
    rows = new Map();
    reads = [];
    failing = false;
    const authenticator = {
      onChange: (listener: (change: SessionChange | null) => void) => (tell = listener),
      held: (sessionId: string) => held.get(sessionId),
    } as unknown as SessionAuthenticator;
    const repository = {
      findLiveByIds: async (_db: Sql, ids: string[]) => {
        reads.push(ids);
        if (failing) throw new Error('the database is away');
        return ids.flatMap((id) => (rows.has(id) ? [rows.get(id)!] : []));
      },
    } as unknown as SessionsRepository;
    const clock: Clock = { now: () => now, every: () => ({ stop: () => undefined }) };
    streams = new SessionStreams(authenticator, repository, {} as Sql, clock, { sessions: { idleMs: IDLE } } as AppConfig);
  });

  /** A live session of `userId`, member of `organizations`, held in memory and stored alike. */
  function session(sessionId: string, userId: string, organizations: string[], lastUsedAt = now, expiresAt = now + 120 * MINUTE) {
    const roles = Object.fromEntries(organizations.map((organization) => [organization, 'viewer' as const]));
    held.set(sessionId, { sessionId, userId, lastUsedAt, expiresAt, roles: new Map(Object.entries(roles)) });
    rows.set(sessionId, { sessionId, userId, createdAt: now, lastUsedAt, expiresAt, roles });
  }

  function open(sessionId: string, userId: string, organizationId: string) {
    const principal = { type: 'session', id: userId, sessionId, organizationId } as SessionPrincipal;
    const stream: { ended: boolean; unwatch: () => void } = { ended: false, unwatch: () => undefined };
    stream.unwatch = streams.watch(principal, () => (stream.ended = true));
    return stream;
  }

  const settled = () => new Promise((resolve) => setImmediate(resolve));

  it("ends an ended session's streams at once, and no other's", () => {
    session('s1', 'u1', ['o1']);
    session('s2', 'u1', ['o1']);
    const [mine, other] = [open('s1', 'u1', 'o1'), open('s2', 'u1', 'o1')];
    tell({ sessionId: 's1' });
    expect([mine.ended, other.ended]).toEqual([true, false]);
    expect(streams.size).toBe(1);
    expect(reads).toEqual([]);
  });

  it("reads a user's sessions again when their memberships change: ends the streams of an organization they left", async () => {
    session('s1', 'u1', ['o1', 'o2']);
    session('s3', 'u2', ['o1']);
    const [left, kept, someoneElse] = [open('s1', 'u1', 'o1'), open('s1', 'u1', 'o2'), open('s3', 'u2', 'o1')];
    rows.get('s1')!.roles = { o2: 'editor' };
    tell({ userId: 'u1' });
    await settled();
    expect(reads).toEqual([['s1']]);
    expect([left.ended, kept.ended, someoneElse.ended]).toEqual([true, false, false]);
  });

  it('ends every stream of a session that is gone from the database (its user deleted), as a full read finds', async () => {
    session('s1', 'u1', ['o1']);
    const stream = open('s1', 'u1', 'o1');
    rows.delete('s1');
    tell(null);
    await settled();
    expect(stream.ended).toBe(true);
  });

  it('ends nothing while the database cannot be read', async () => {
    session('s1', 'u1', ['o1']);
    const stream = open('s1', 'u1', 'o1');
    failing = true;
    tell({ userId: 'u1' });
    await settled();
    expect(stream.ended).toBe(false);
  });

  it('reads a session no longer held in memory when its stream opens (something changed since its request)', async () => {
    session('s1', 'u1', ['o1']);
    held.delete('s1');
    rows.get('s1')!.roles = {};
    const stream = open('s1', 'u1', 'o1');
    await settled();
    expect(reads).toEqual([['s1']]);
    expect(stream.ended).toBe(true);
  });

  it('ends streams at the end of their session’s lifetime, without a read', async () => {
    session('s1', 'u1', ['o1'], now, now + 10 * MINUTE);
    const stream = open('s1', 'u1', 'o1');
    now += 10 * MINUTE - 1;
    await streams.check();
    expect(stream.ended).toBe(false);
    now += 1;
    await streams.check();
    expect(stream.ended).toBe(true);
    expect(reads).toEqual([]);
  });

  it('ends streams of an idle session once the database agrees, and keeps those used elsewhere meanwhile', async () => {
    session('s1', 'u1', ['o1']);
    session('s2', 'u2', ['o1']);
    const [idle, usedElsewhere] = [open('s1', 'u1', 'o1'), open('s2', 'u2', 'o1')];
    rows.get('s2')!.lastUsedAt = now + 10 * MINUTE; // recorded by another instance
    now += IDLE;
    await streams.check();
    expect(reads).toEqual([['s1', 's2']]);
    expect([idle.ended, usedElsewhere.ended]).toEqual([true, false]);
    // What was read counts: the next check reads nothing until that use is IDLE old.
    await streams.check();
    expect(reads).toHaveLength(1);
    now += 10 * MINUTE;
    await streams.check();
    expect(usedElsewhere.ended).toBe(true);
  });

  it('counts a use this instance served since the stream opened', async () => {
    session('s1', 'u1', ['o1']);
    const stream = open('s1', 'u1', 'o1');
    held.get('s1')!.lastUsedAt = now + MINUTE;
    now += IDLE;
    await streams.check();
    expect(stream.ended).toBe(false);
    expect(reads).toEqual([]);
  });

  it('forgets a stream that closed by itself', () => {
    session('s1', 'u1', ['o1']);
    const stream = open('s1', 'u1', 'o1');
    stream.unwatch();
    expect(streams.size).toBe(0);
    tell({ sessionId: 's1' });
    expect(stream.ended).toBe(false);
  });
});
