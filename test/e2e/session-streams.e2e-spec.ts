import { admin, createOrganization, TestOrganization } from '../factories/organizations.factory';
import { addMember, asSession, createUser, memberSignedIn, PASSWORD, signIn, SignedIn } from '../factories/people.factory';
import { SessionStreams } from '../../src/auth/sessions/session-streams';
import { ChangeFeed } from '../../src/invalidation/change-feed';
import { InvalidationBus } from '../../src/invalidation/invalidation-bus';
import { expectApiError } from '../support/expect-error';
import { FakeClock } from '../support/fake-clock';
import { openSse, SseConnection } from '../support/sse-client';
import { createTestApp, TestApp } from '../support/test-app';

const MINUTE = 60_000;

/**
 * decisions.md, "Trust": "Streams follow the session". Both streams opened with a session (the config stream and
 * GET /v1/events) end when the session ends for any reason, or when the membership they were opened in ends: at once on
 * the instance that made the change, within a second on the other (the bus), at the change feed's next read when the
 * bus lost the message, and at idle or absolute expiry by the streams' timer (run here by hand: the fake clock's
 * timers never fire). An open stream is not a use of the session.
 */
describe('streams follow the session', () => {
  const clock = new FakeClock();
  let a: TestApp;
  let b: TestApp;
  let org: TestOrganization;
  const open: SseConnection[] = [];

  beforeAll(async () => {
    a = await createTestApp({ SESSION_IDLE_MINUTES: '30', SESSION_MAX_HOURS: '2' }, { clock });
    b = await createTestApp({ SESSION_IDLE_MINUTES: '30', SESSION_MAX_HOURS: '2' }, { clock, sameDatabaseAs: a });
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });
  beforeEach(async () => {
    org = await createOrganization(a);
  });
  afterEach(() => {
    for (const stream of open.splice(0)) stream.close();
  });

  /** 'ended' when the server ends the stream within `ms`, else 'open'. */
  const within = (stream: SseConnection, ms: number) =>
    Promise.race([stream.ended.then(() => 'ended'), new Promise((resolve) => setTimeout(() => resolve('open'), ms))]);

  const routes = {
    'the config stream': '/flags/config/stream',
    'the event stream': '/events',
  } as const;

  describe.each(Object.entries(routes))('%s', (_name, route) => {
    async function listen(app: TestApp, who: SignedIn, organizationId = org.id): Promise<SseConnection> {
      const stream = await openSse(`${app.config.urls.baseUrl}${route}?organizationId=${organizationId}`, { Cookie: who.cookie });
      open.push(stream);
      expect(stream.status).toBe(200);
      return stream;
    }

    it('ends at logout, on the instance that made it and on the other within a second', async () => {
      const me = await memberSignedIn(a, org.id, 'viewer');
      const here = await listen(a, me);
      const there = await listen(b, me);
      await asSession(a, me).post('/auth/logout').expect(204);
      await expect(Promise.all([within(here, 500), within(there, 1_000)])).resolves.toEqual(['ended', 'ended']);
      expect(a.app.get(SessionStreams).size + b.app.get(SessionStreams).size).toBe(0);
    });

    it("ends when the membership it was opened in ends, and only that one's", async () => {
      const other = await createOrganization(a);
      const me = await memberSignedIn(a, org.id, 'viewer');
      await addMember(a, other.id, me.userId, 'viewer');
      const removed = await listen(b, me);
      const kept = await listen(b, me, other.id);
      await admin(a).delete(`/organizations/${org.id}/members/${me.userId}`).expect(204);
      await expect(within(removed, 1_000)).resolves.toBe('ended');
      await expect(within(kept, 300)).resolves.toBe('open');
      // A new role is no end: the membership holds.
      await admin(a).patch(`/organizations/${other.id}/members/${me.userId}`).send({ role: 'editor' }).expect(200);
      await expect(within(kept, 500)).resolves.toBe('open');
    });

    it("ends the user's other sessions' streams at a password change, and keeps the changing one's", async () => {
      const user = await createUser(a);
      await addMember(a, org.id, user.id, 'viewer');
      const changing = await signIn(a, user.email);
      const ended = await signIn(a, user.email);
      const mine = await listen(b, changing);
      const theirs = await listen(b, ended);
      await asSession(a, changing).post('/auth/password').send({ currentPassword: PASSWORD, newPassword: 'the new passphrase' }).expect(204);
      await expect(within(theirs, 1_000)).resolves.toBe('ended');
      await expect(within(mine, 300)).resolves.toBe('open');
    });

    it('ends when the user is deleted', async () => {
      const me = await memberSignedIn(a, org.id, 'viewer');
      const here = await listen(a, me);
      const there = await listen(b, me);
      await admin(a).delete(`/users/${me.userId}`).expect(204);
      await expect(Promise.all([within(here, 500), within(there, 1_000)])).resolves.toEqual(['ended', 'ended']);
    });

    it('ends at the change feed’s next read when the bus lost the message', async () => {
      const me = await memberSignedIn(a, org.id, 'viewer');
      await b.app.get(ChangeFeed).catchUp(); // what A did so far has reached B
      const there = await listen(b, me);
      const publish = jest.spyOn(a.app.get(InvalidationBus), 'publish').mockImplementation(() => undefined);
      try {
        await admin(a).delete(`/organizations/${org.id}/members/${me.userId}`).expect(204);
      } finally {
        publish.mockRestore();
      }
      await expect(within(there, 300)).resolves.toBe('open'); // B heard nothing yet
      await b.app.get(ChangeFeed).tick();
      await expect(within(there, 1_000)).resolves.toBe('ended');
    });

    it('ends when the session goes idle, by the timer: an open stream is not a use', async () => {
      const me = await memberSignedIn(a, org.id, 'viewer');
      const stream = await listen(a, me);
      clock.advance(29 * MINUTE);
      await a.app.get(SessionStreams).check();
      await expect(within(stream, 100)).resolves.toBe('open');
      clock.advance(MINUTE);
      await a.app.get(SessionStreams).check();
      await expect(within(stream, 500)).resolves.toBe('ended');
      expectApiError(await asSession(a, me, org.id).get('/flags'), 401, 'UNAUTHORIZED');
    });

    it('stays open while the session is used on another instance, and ends at its lifetime (SESSION_MAX_HOURS)', async () => {
      const me = await memberSignedIn(a, org.id, 'viewer');
      const stream = await listen(a, me);
      for (let i = 0; i < 5; i += 1) {
        clock.advance(20 * MINUTE);
        await asSession(b, me, org.id).get('/flags').expect(200);
        await new Promise((resolve) => setTimeout(resolve, 50)); // B records the use without holding up its answer
        await a.app.get(SessionStreams).check();
        await expect(within(stream, 50)).resolves.toBe('open');
      }
      clock.advance(20 * MINUTE); // 2 hours after the sign-in, 20 minutes after its last use
      await a.app.get(SessionStreams).check();
      await expect(within(stream, 500)).resolves.toBe('ended');
    });

    it('does not keep its session alive by reconnecting (a forgotten tab goes idle)', async () => {
      const me = await memberSignedIn(a, org.id, 'viewer');
      for (const minutes of [10, 10, 9]) {
        clock.advance(minutes * MINUTE);
        (await listen(a, me)).close();
      }
      clock.advance(MINUTE); // 30 minutes after the sign-in, its last use
      expectApiError(await asSession(a, me, org.id).get('/flags'), 401, 'UNAUTHORIZED');
    });
  });
});
