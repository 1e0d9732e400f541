import request from 'supertest';
import { admin, createOrganization } from '../factories/organizations.factory';
import { addMember, asSession, createUser, memberSignedIn, PASSWORD, signIn } from '../factories/people.factory';
import { PasswordHasher } from '../../src/auth/sessions/password-hasher';
import { EMAIL_FAILURES } from '../../src/auth/sessions/sign-in-limiter';
import { ChangeFeed } from '../../src/invalidation/change-feed';
import { InvalidationBus } from '../../src/invalidation/invalidation-bus';
import { expectApiError } from '../support/expect-error';
import { eventually } from '../support/eventually';
import { FakeClock } from '../support/fake-clock';
import { queriesDuring } from '../support/queries';
import { createTestApp, TestApp } from '../support/test-app';

const MINUTE = 60_000;

describe('sessions: expiry, revocation on every instance, sign-in limits', () => {
  const clock = new FakeClock();
  let a: TestApp;
  let b: TestApp;
  beforeAll(async () => {
    a = await createTestApp({ SESSION_IDLE_MINUTES: '30', SESSION_MAX_HOURS: '2', SIGN_IN_FAILURES_PER_MINUTE: '5' }, { clock });
    b = await createTestApp({ SESSION_IDLE_MINUTES: '30', SESSION_MAX_HOURS: '2' }, { clock, sameDatabaseAs: a });
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  /** When the session of `userId` was last recorded as used (epoch ms). */
  const recordedUse = async (userId: string) =>
    Number((await a.db.query('SELECT extract(epoch FROM last_used_at) * 1000 AS at FROM sessions WHERE user_id = $1', [userId])).rows[0].at);

  describe('expiry', () => {
    it('ends a session after SESSION_IDLE_MINUTES without a request, counting uses on any instance', async () => {
      const org = await createOrganization(a);
      const me = await memberSignedIn(a, org.id, 'viewer');
      await asSession(a, me, org.id).get('/flags').expect(200);
      // Used on B now and then: A, which last saw it at sign-in, reads the use B recorded before calling it idle.
      // B records a use after answering (the request does not wait for it): the test lets each one land before it
      // moves the clock 20 minutes on, which real time never does within the milliseconds the write takes.
      for (let i = 0; i < 3; i += 1) {
        clock.advance(20 * MINUTE);
        await asSession(b, me, org.id).get('/flags').expect(200);
        await eventually(async () => Math.abs((await recordedUse(me.userId)) - clock.now()) < 1000, { what: "B's use recorded" });
      }
      clock.advance(20 * MINUTE);
      await asSession(a, me, org.id).get('/flags').expect(200);
      clock.advance(30 * MINUTE);
      expectApiError(await asSession(a, me, org.id).get('/flags'), 401, 'UNAUTHORIZED');
      expectApiError(await asSession(b, me, org.id).get('/flags'), 401, 'UNAUTHORIZED');
    });

    it('records a use at most once a minute', async () => {
      const org = await createOrganization(a);
      const me = await memberSignedIn(a, org.id, 'viewer');
      clock.advance(MINUTE);
      const writes = await queriesDuring(async () => {
        for (let i = 0; i < 5; i += 1) await asSession(a, me, org.id).get('/flags').expect(200);
      }, /UPDATE sessions SET last_used_at/);
      expect(writes).toBe(1);
      // Written after the answer (the request does not wait for it).
      await eventually(async () => Math.abs((await recordedUse(me.userId)) - clock.now()) < 1000, { what: 'the use recorded' });
    });

    it('ends a session SESSION_MAX_HOURS after sign-in, however much it is used', async () => {
      const org = await createOrganization(a);
      const me = await memberSignedIn(a, org.id, 'viewer');
      for (let i = 0; i < 7; i += 1) {
        clock.advance(15 * MINUTE);
        await asSession(a, me, org.id).get('/flags').expect(200);
      }
      clock.advance(15 * MINUTE + 1);
      expectApiError(await asSession(a, me, org.id).get('/flags'), 401, 'UNAUTHORIZED');
      expectApiError(await asSession(a, me).get('/auth/session'), 401, 'UNAUTHORIZED');
    });
  });

  describe('on every instance', () => {
    /**
     * What A did so far reaches B before B loads a session: the organization's new key sets off a catch-up read on B
     * up to a second later, and a membership's message may still be on its way. Either, arriving after B loaded the
     * session, makes B drop it and read it again (rightly), which a test of what B holds must not race with.
     */
    const settledOn = (t: TestApp) => t.app.get(ChangeFeed).catchUp();

    it('serves a session from memory: no database round trip per request once it is known', async () => {
      const org = await createOrganization(a);
      const me = await memberSignedIn(a, org.id, 'viewer');
      await settledOn(b);
      await asSession(b, me, org.id).get('/flags/quota').expect(200);
      // Statements on the sessions table, but for the change feed's periodic read (every 3 s on each instance, not a
      // request's): five polls under load can outlast a tick.
      const reads = await queriesDuring(async () => {
        for (let i = 0; i < 5; i += 1) await asSession(b, me, org.id).get('/flags/config').expect(200);
      }, /^(?![\s\S]*pg_current_snapshot\(\))[\s\S]*FROM sessions/);
      expect(reads).toBe(0);
    });

    it('ends a logout on the other instance within a second, through the bus', async () => {
      const org = await createOrganization(a);
      const me = await memberSignedIn(a, org.id, 'viewer');
      await asSession(b, me, org.id).get('/flags').expect(200);
      await asSession(a, me).post('/auth/logout').expect(204);
      await eventually(async () => (await asSession(b, me, org.id).get('/flags')).status === 401, { timeoutMs: 1000, what: 'the logout on B' });
    });

    it('takes a removed membership and a new role on the other instance within a second', async () => {
      const org = await createOrganization(a);
      const me = await memberSignedIn(a, org.id, 'editor');
      await asSession(b, me, org.id).get('/flags').expect(200);
      await admin(a).patch(`/organizations/${org.id}/members/${me.userId}`).send({ role: 'viewer' }).expect(200);
      const write = () => asSession(b, me, org.id).post('/flags').send({ key: 'nope', name: 'x', type: 'boolean', value: true });
      await eventually(async () => (await write()).status === 403, { timeoutMs: 1000, what: 'the new role on B' });
      await admin(a).delete(`/organizations/${org.id}/members/${me.userId}`).expect(204);
      await eventually(async () => (await asSession(b, me, org.id).get('/flags')).status === 403, { timeoutMs: 1000, what: 'the removal on B' });
    });

    it('knows a membership granted on the other instance within a second', async () => {
      const org = await createOrganization(a);
      const later = await createOrganization(a);
      const me = await memberSignedIn(a, org.id, 'viewer');
      await asSession(b, me, org.id).get('/flags').expect(200);
      await addMember(a, later.id, me.userId, 'viewer');
      await eventually(async () => (await asSession(b, me, later.id).get('/flags')).status === 200, { timeoutMs: 1500, what: 'the membership on B' });
    });

    it('ends sessions whose bus message was lost at the change feed’s next read', async () => {
      const org = await createOrganization(a);
      const user = await createUser(a);
      await addMember(a, org.id, user.id, 'viewer');
      const here = await signIn(a, user.email);
      const there = await signIn(a, user.email);
      await settledOn(b);
      await asSession(b, there, org.id).get('/flags').expect(200); // B holds the session from here on
      const publish = jest.spyOn(a.app.get(InvalidationBus), 'publish').mockImplementation(() => undefined);
      try {
        await asSession(a, here).post('/auth/password').send({ currentPassword: PASSWORD, newPassword: 'the new passphrase' }).expect(204);
      } finally {
        publish.mockRestore();
      }
      await asSession(b, there, org.id).get('/flags').expect(200); // B heard nothing yet
      await b.app.get(ChangeFeed).tick();
      expectApiError(await asSession(b, there, org.id).get('/flags'), 401, 'UNAUTHORIZED');
      await asSession(b, here, org.id).get('/flags').expect(200);
    });
  });

  describe('the config poll and the change stream with a session', () => {
    it('serves the poll to a session (the lean path), and refuses a viewer without an organization', async () => {
      const org = await createOrganization(a);
      const me = await memberSignedIn(a, org.id, 'viewer');
      const first = await asSession(a, me, org.id).get('/flags/config').expect(200);
      await asSession(a, me, org.id).get('/flags/config').set('If-None-Match', first.headers.etag).expect(304);
      expectApiError(await asSession(a, me).get('/flags/config'), 403, 'FORBIDDEN', /X-Organization-Id/);
    });

    it('opens the change stream with ?organizationId= (EventSource sends no headers)', async () => {
      const org = await createOrganization(a);
      const me = await memberSignedIn(a, org.id, 'viewer');
      const refused = await request(a.http).get('/v1/flags/config/stream').set('Cookie', me.cookie);
      expectApiError(refused, 403, 'FORBIDDEN', /organizationId/);
      const response = await new Promise<{ status: number; type: string }>((resolve, reject) => {
        const req = request(a.http)
          .get(`/v1/flags/config/stream?organizationId=${org.id}`)
          .set('Cookie', me.cookie)
          .buffer(false)
          .parse((res, done) => {
            resolve({ status: res.statusCode ?? 0, type: String(res.headers['content-type']) });
            (res as unknown as { destroy(): void }).destroy();
            done(null, null);
          });
        req.end((error) => (error && !/aborted|socket hang up/i.test(String(error)) ? reject(error) : undefined));
      });
      expect(response).toEqual({ status: 200, type: expect.stringContaining('text/event-stream') });
    });
  });

  describe('sign-in limits', () => {
    it('refuses a flood of failed sign-ins from one address with 429 and Retry-After, before any hashing', async () => {
      const user = await createUser(a);
      for (let i = 0; i < 5; i += 1) {
        await request(a.http)
          .post('/v1/auth/login')
          .send({ email: `flood-${i}@studio.example`, password: 'wrong password here' })
          .expect(401);
      }
      const hashing = jest.spyOn(a.app.get(PasswordHasher), 'verify');
      const nothing = jest.spyOn(a.app.get(PasswordHasher), 'verifyNothing');
      try {
        const refused = await request(a.http).post('/v1/auth/login').send({ email: user.email, password: PASSWORD });
        expectApiError(refused, 429, 'RATE_LIMITED', /failed sign-ins a minute from this address/);
        expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
        expect(hashing).not.toHaveBeenCalled();
        expect(nothing).not.toHaveBeenCalled();
      } finally {
        hashing.mockRestore();
        nothing.mockRestore();
      }
      // The address's budget is apart from the API keys': a valid key still works from it, and so does B.
      const org = await createOrganization(a);
      await request(a.http).get('/v1/flags').set('Authorization', `Bearer ${org.key}`).expect(200);
      await signIn(b, user.email);
      clock.advance(MINUTE);
      await signIn(a, user.email);
    });

    it(`refuses an email after ${EMAIL_FAILURES} failures in 15 minutes, before the address's budget is spent`, async () => {
      const user = await createUser(b);
      for (let i = 0; i < EMAIL_FAILURES; i += 1) {
        await request(b.http).post('/v1/auth/login').send({ email: user.email, password: 'wrong password here' }).expect(401);
      }
      const refused = await request(b.http).post('/v1/auth/login').send({ email: user.email.toUpperCase(), password: PASSWORD });
      expectApiError(refused, 429, 'RATE_LIMITED', /for this email in 15 minutes/);
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      clock.advance(15 * MINUTE);
      await signIn(b, user.email);
    });
  });
});
