import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';
import request from 'supertest';
import { admin, createOrganization } from '../factories/organizations.factory';
import { asSession, createUser, memberSignedIn, PASSWORD, signIn } from '../factories/people.factory';
import { PasswordHasher } from '../../src/auth/sessions/password-hasher';
import { INVITATION_TTL_MS } from '../../src/people/people.service';
import { eventually } from '../support/eventually';
import { expectApiError } from '../support/expect-error';
import { FakeClock } from '../support/fake-clock';
import { describeWithBinaries, redisServerBinary } from '../support/servers/binaries';
import { RedisServer, startRedisServer } from '../support/servers/redis-server';
import { createTestApp, TestApp } from '../support/test-app';

/** Calls into the app's password hasher (verifying a sign-in, hashing a new password) from now on. */
function countHashing(t: TestApp): { readonly calls: number } {
  const hasher = t.app.get(PasswordHasher);
  // spyOn answers the spy already there, with the calls it counted so far.
  const spies = [jest.spyOn(hasher, 'verify'), jest.spyOn(hasher, 'verifyNothing'), jest.spyOn(hasher, 'hash')];
  const total = () => spies.reduce((sum, spy) => sum + spy.mock.calls.length, 0);
  const before = total();
  return {
    get calls() {
      return total() - before;
    },
  };
}

const login = (t: TestApp, email: string, password = PASSWORD) => request(t.http).post('/v1/auth/login').send({ email, password });
const statuses = (answers: { status: number }[]) => answers.map((answer) => answer.status).sort();
const randomToken = () => randomBytes(32).toString('base64url');
const tokenOf = (url: string) => url.split('/').pop()!;

/** Issue 32, items 2, 3, 4, 6 ("who can learn what") and 7 (no-store): identities and the budgets in front of the hasher. */
describe('people: one spelling per email, budgets before the work, and what an invitation tells', () => {
  describe('one email, one spelling', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await createTestApp({ SIGN_IN_FAILURES_PER_MINUTE: '1000' });
    });
    afterAll(() => t.close());

    it('stores the normal form; ALICE@A.EXAMPLE and alice@a.example are one email, for sign-in and for uniqueness', async () => {
      const local = `alice${Date.now()}`;
      const created = await admin(t)
        .post('/users')
        .send({ email: `  ${local.toUpperCase()}@A.Example `, name: 'Alice', password: PASSWORD })
        .expect(201);
      expect(created.body.email).toBe(`${local}@a.example`);
      const { rows } = await t.db.query('SELECT email FROM users WHERE id = $1', [created.body.id]);
      expect(rows).toEqual([{ email: `${local}@a.example` }]);
      await login(t, `${local.toUpperCase()}@A.EXAMPLE`).expect(200);
      await login(t, `${local}@a.example`).expect(200);
      expectApiError(
        await admin(t)
          .post('/users')
          .send({ email: `${local}@A.EXAMPLE`, name: 'Twin' }),
        409,
        'EMAIL_TAKEN',
      );
    });

    it('takes alİce@a.example (U+0130) for another address: it does not sign in as alice, and has a failure budget of its own', async () => {
      const local = `al${Date.now()}`;
      const alice = await createUser(t, { email: `${local}ice@a.example` });
      const dotted = `${local}İce@a.example`;
      // Neither by alice's password: the email has no account.
      expectApiError(await login(t, dotted), 401, 'WRONG_CREDENTIALS');
      // It may even be a user of its own (on a cluster whose lower() folds İ to i, the old index refused it).
      const twin = await createUser(t, { email: dotted, password: 'the dotted one’s passphrase' });
      expect(twin.email).toBe(dotted);
      expect((await signIn(t, dotted, 'the dotted one’s passphrase')).userId).toBe(twin.id);
      expect((await signIn(t, alice.email)).userId).toBe(alice.id);

      // The dotted spelling spends its own budget (one attempt of it failed above); alice's stays whole.
      const wrong = await Promise.all(Array.from({ length: 10 }, () => login(t, dotted, 'not the passphrase')));
      expect(statuses(wrong)).toEqual([...Array(9).fill(401), 429]);
      expectApiError(await login(t, dotted, 'the dotted one’s passphrase'), 429, 'RATE_LIMITED', /this email/);
      await login(t, alice.email).expect(200);
      expectApiError(await login(t, alice.email, 'not the passphrase'), 401, 'WRONG_CREDENTIALS');
    });

    it('puts domains into ASCII (IDNA) and answers 400 naming the field when one cannot be', async () => {
      const local = `sam${Date.now()}`;
      const created = await admin(t)
        .post('/users')
        .send({ email: `${local}@Bücher.example`, name: 'Sam', password: PASSWORD })
        .expect(201);
      expect(created.body.email).toBe(`${local}@xn--bcher-kva.example`);
      await login(t, `${local.toUpperCase()}@BÜCHER.example`).expect(200);
      await login(t, `${local}@xn--bcher-kva.example`).expect(200);

      const unconvertible = /must be an email address: its domain cannot be converted to ASCII \(IDNA\)/;
      expectApiError(
        await admin(t).post('/users').send({ email: 'x@\u0378.example', name: 'X' }),
        400,
        'VALIDATION_ERROR',
        new RegExp(`^email ${unconvertible.source}`),
      );
      expectApiError(
        await admin(t)
          .post('/organizations')
          .send({ name: 'Nope', admin: { email: 'x@\u0378.example', name: 'X', password: PASSWORD } }),
        400,
        'VALIDATION_ERROR',
        new RegExp(`^admin\\.email ${unconvertible.source}`),
      );
      expectApiError(await login(t, 'x@\u0378.example'), 400, 'VALIDATION_ERROR', new RegExp(`^email ${unconvertible.source}`));
      expectApiError(await login(t, 'no-at-sign'), 400, 'VALIDATION_ERROR', /^email must be an email address$/);
    });

    it("reads an invitation's email and an organization's first admin in the same spelling", async () => {
      const org = await createOrganization(t);
      const boss = await memberSignedIn(t, org.id, 'admin');
      const local = `kim${Date.now()}`;
      const invited = await asSession(t, boss, org.id)
        .post('/organization/invitations')
        .send({ email: `${local.toUpperCase()}@Bücher.Example`, role: 'viewer' })
        .expect(201);
      expect(invited.body.email).toBe(`${local}@xn--bcher-kva.example`);
      const preview = await request(t.http)
        .get(`/v1/auth/invitations/${tokenOf(invited.body.url)}`)
        .expect(200);
      expect(preview.body.email).toBe(`${local}@xn--bcher-kva.example`);

      const founder = `founder${Date.now()}`;
      const founded = await admin(t)
        .post('/organizations')
        .send({ name: 'Founded', admin: { email: `${founder.toUpperCase()}@F.Example`, name: 'F', password: PASSWORD } })
        .expect(201);
      expect(founded.body.admin.email).toBe(`${founder}@f.example`);
      // The same person by another spelling joins as the existing user.
      const again = await admin(t)
        .post('/organizations')
        .send({ name: 'Founded again', admin: { email: `${founder}@F.EXAMPLE` } })
        .expect(201);
      expect(again.body.admin.id).toBe(founded.body.admin.id);
    });
  });

  /**
   * The budgets' races, on one instance or on two sharing Redis: requests sent at once, each counted before the
   * hasher sees it. The client address comes from X-Forwarded-For (TRUST_PROXY trusts loopback by default), so that a
   * test spends the budgets it means to.
   */
  const budgetRaces = (apps: () => TestApp[]) => {
    let addresses = 0;
    const newAddress = () => `203.0.113.${(addresses += 1)}`;
    const loginFrom = (address: string, i: number, email: string, password = PASSWORD) => {
      const all = apps();
      return login(all[i % all.length], email, password).set('X-Forwarded-For', address);
    };
    const hashingOf = () => {
      const counters = apps().map(countHashing);
      return {
        get calls() {
          return counters.reduce((sum, counter) => sum + counter.calls, 0);
        },
      };
    };

    it('lets at most 10 of 15 wrong passwords sent at once for one email reach the hasher: 10 x 401, 5 x 429', async () => {
      const user = await createUser(apps()[0]);
      const hashing = hashingOf();
      const answers = await Promise.all(Array.from({ length: 15 }, (_, i) => loginFrom(newAddress(), i, user.email, 'a wrong passphrase!')));
      expect(statuses(answers)).toEqual([...Array(10).fill(401), ...Array(5).fill(429)]);
      expect(hashing.calls).toBe(10);
      for (const refused of answers.filter((answer) => answer.status === 429)) {
        expectApiError(refused, 429, 'RATE_LIMITED', /10 failed sign-ins for this email/);
        expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      }
      // Spent: even the right password is refused, without hashing, until the window ends.
      expectApiError(await loginFrom(newAddress(), 0, user.email), 429, 'RATE_LIMITED');
      expect(hashing.calls).toBe(10);
    });

    it('lets at most SIGN_IN_FAILURES_PER_MINUTE (5) sign-ins sent at once from one address reach the hasher', async () => {
      const address = newAddress();
      const hashing = hashingOf();
      const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => loginFrom(address, i, `nobody-${i}-${Date.now()}@studio.example`)));
      expect(statuses(answers)).toEqual([...Array(5).fill(401), ...Array(7).fill(429)]);
      expect(hashing.calls).toBe(5);
      expectApiError(
        answers.find((answer) => answer.status === 429)!,
        429,
        'RATE_LIMITED',
        /5 failed sign-ins a minute from this address/,
      );
    });

    it('gives a successful sign-in its attempt back, so that signing in often never runs out', async () => {
      const user = await createUser(apps()[0]);
      const address = newAddress();
      for (let i = 0; i < 12; i += 1) await loginFrom(address, i, user.email).expect(200);
      const together = await Promise.all([0, 1, 2].map((i) => loginFrom(address, i, user.email)));
      expect(statuses(together)).toEqual([200, 200, 200]);
    });
  };

  describe('budgets count before the work, on one instance (no Redis)', () => {
    let t: TestApp;
    beforeAll(async () => {
      t = await createTestApp({ SIGN_IN_FAILURES_PER_MINUTE: '5', REDIS_URL: '' });
      expect(t.config.redisUrl).toBeUndefined();
    });
    afterAll(() => t.close());
    budgetRaces(() => [t]);
  });

  describeWithBinaries('sign-in budgets through Redis', { 'redis-server': redisServerBinary() })(
    'budgets count before the work, shared by two instances through Redis (REDIS_URL)',
    () => {
      let redis: RedisServer;
      let a: TestApp;
      let b: TestApp;
      beforeAll(async () => {
        redis = await startRedisServer();
        a = await createTestApp({ REDIS_URL: redis.url, SIGN_IN_FAILURES_PER_MINUTE: '5' });
        b = await createTestApp({ REDIS_URL: redis.url, SIGN_IN_FAILURES_PER_MINUTE: '5' }, { sameDatabaseAs: a });
      });
      afterAll(async () => {
        await b?.close();
        await a?.close();
        await redis?.close();
      });
      budgetRaces(() => [a, b]);

      it('writes neither emails nor addresses to Redis, only their hashes', async () => {
        const user = await createUser(a);
        await login(a, user.email, 'a wrong passphrase!').set('X-Forwarded-For', '198.51.100.7').expect(401);
        const client = new Redis(redis.url);
        try {
          const keys = await client.keys('flagstore:signin:*');
          expect(keys.length).toBeGreaterThanOrEqual(2);
          for (const key of keys) expect(key).toMatch(/^flagstore:signin:(test-[0-9a-f]{16}:)?[0-9a-f]{64}$/);
        } finally {
          client.disconnect();
        }
      });

      it('keeps counting on each instance while Redis does not answer, and shares again once it does', async () => {
        const user = await createUser(a);
        await redis.stop();
        try {
          const answers = await Promise.all(
            Array.from({ length: 12 }, (_, i) => login(a, user.email, 'a wrong passphrase!').set('X-Forwarded-For', `192.0.2.${i + 1}`)),
          );
          expect(statuses(answers)).toEqual([...Array(10).fill(401), 429, 429]);
        } finally {
          await redis.start();
        }
        // Back: attempts reach Redis again (a restarted Redis is empty).
        const client = new Redis(redis.url);
        try {
          let tries = 0;
          await eventually(
            async () => {
              tries += 1;
              await login(b, user.email, 'a wrong passphrase!').set('X-Forwarded-For', `192.0.2.${100 + tries}`);
              return (await client.keys('flagstore:signin:*')).length > 0;
            },
            { what: 'sign-in attempts counted in Redis again' },
          );
        } finally {
          client.disconnect();
        }
      });
    },
  );

  describe('invitations: looked up before any hashing, on the address budget, telling nothing about accounts', () => {
    const clock = new FakeClock();
    let t: TestApp;
    beforeAll(async () => {
      t = await createTestApp({ SIGN_IN_FAILURES_PER_MINUTE: '5' }, { clock });
    });
    afterAll(() => t.close());

    let addresses = 0;
    const from = () => `198.51.100.${(addresses += 1)}`;
    const accept = (token: string, address: string) => request(t.http).post(`/v1/auth/invitations/${token}/accept`).set('X-Forwarded-For', address);
    const preview = (token: string, address: string) => request(t.http).get(`/v1/auth/invitations/${token}`).set('X-Forwarded-For', address);
    const invite = async (email: string, role = 'editor') => {
      const org = await createOrganization(t, `Studio ${email}`);
      const boss = await memberSignedIn(t, org.id, 'admin');
      const created = await asSession(t, boss, org.id).post('/organization/invitations').send({ email, role }).expect(201);
      return { org, boss, invitation: created.body, token: tokenOf(created.body.url) };
    };

    it('costs no hashing for unknown links, and answers 429 with Retry-After once the address has tried too many', async () => {
      const hashing = countHashing(t);
      const address = from();
      const answers = [];
      for (let i = 0; i < 8; i += 1) answers.push(await accept(randomToken(), address).send({ name: 'Guess', password: 'a long passphrase' }));
      expect(answers.map((answer) => answer.status)).toEqual([404, 404, 404, 404, 404, 429, 429, 429]);
      expectApiError(answers[5], 429, 'RATE_LIMITED', /from this address/);
      expect(Number(answers[5].headers['retry-after'])).toBeGreaterThan(0);
      // The invitation's page shares the budget.
      expectApiError(await preview(randomToken(), address), 429, 'RATE_LIMITED');
      // At once, too: no more than the budget is looked up.
      const other = from();
      const burst = await Promise.all(
        Array.from({ length: 9 }, () => accept(randomToken(), other).send({ name: 'G', password: 'a long passphrase' })),
      );
      expect(statuses(burst)).toEqual([...Array(5).fill(404), ...Array(4).fill(429)]);
      expect(hashing.calls).toBe(0);
    });

    it('costs no hashing for a used, withdrawn or expired link either', async () => {
      const { boss, org, token } = await invite(`used-${Date.now()}@studio.example`);
      await accept(token, from()).send({ name: 'First', password: 'a long passphrase' }).expect(200);
      const withdrawn = await invite(`withdrawn-${Date.now()}@studio.example`);
      await asSession(t, withdrawn.boss, withdrawn.org.id).delete(`/organization/invitations/${withdrawn.invitation.id}`).expect(204);
      const hashing = countHashing(t);
      expectApiError(await accept(token, from()).send({ name: 'Again', password: 'a long passphrase' }), 410, 'INVITATION_USED');
      expectApiError(await accept(withdrawn.token, from()).send({ name: 'W', password: 'a long passphrase' }), 410, 'INVITATION_USED');
      const expiring = await asSession(t, boss, org.id)
        .post('/organization/invitations')
        .send({ email: `late-${Date.now()}@studio.example`, role: 'viewer' })
        .expect(201);
      clock.advance(INVITATION_TTL_MS);
      expectApiError(await accept(tokenOf(expiring.body.url), from()).send({ name: 'L', password: 'a long passphrase' }), 410, 'INVITATION_USED');
      expect(hashing.calls).toBe(0);
    });

    it('answers 401 SIGN_IN_REQUIRED alike whether or not the invited email has an account', async () => {
      const existing = await createUser(t);
      const withAccount = await invite(existing.email);
      const withoutAccount = await invite(`newcomer-${Date.now()}@studio.example`);

      // No session and an empty body: the same answer for both.
      const emptyWith = await accept(withAccount.token, from()).send({});
      const emptyWithout = await accept(withoutAccount.token, from()).send({});
      expectApiError(emptyWith, 401, 'SIGN_IN_REQUIRED', /^Sign in as the invited person, or create the account/);
      expect(emptyWithout.status).toBe(401);
      expect(emptyWithout.body).toEqual(emptyWith.body);
      // Someone else's session changes nothing.
      const stranger = await memberSignedIn(t, withAccount.org.id, 'viewer');
      const strangerWith = await asSession(t, stranger).post(`/auth/invitations/${withAccount.token}/accept`).set('X-Forwarded-For', from()).send({});
      const strangerWithout = await asSession(t, stranger)
        .post(`/auth/invitations/${withoutAccount.token}/accept`)
        .set('X-Forwarded-For', from())
        .send({});
      expect([strangerWith.status, strangerWithout.status]).toEqual([401, 401]);
      expect(strangerWithout.body).toEqual(strangerWith.body);
      // A name and a password for the email with an account: the same 401, and no second user with that email.
      const hashing = countHashing(t);
      const taken = await accept(withAccount.token, from()).send({ name: 'Impostor', password: 'a long passphrase' });
      expect(taken.status).toBe(401);
      expect(taken.body).toEqual(emptyWith.body);
      // The password was hashed all the same, as it is for a new account: the time tells nothing either.
      expect(hashing.calls).toBe(1);
      const { rows } = await t.db.query('SELECT count(*)::int AS n FROM users WHERE email = $1', [existing.email]);
      expect(rows[0].n).toBe(1);
      // One of each half alone is refused before anything is looked up.
      expectApiError(await accept(withoutAccount.token, from()).send({ name: 'Half' }), 400, 'VALIDATION_ERROR', /name and password go together/);

      // Both links still work for the right person.
      const me = await signIn(t, existing.email);
      await asSession(t, me).post(`/auth/invitations/${withAccount.token}/accept`).set('X-Forwarded-For', from()).send({}).expect(204);
      await accept(withoutAccount.token, from()).send({ name: 'Newcomer', password: 'a long passphrase' }).expect(200);
    });

    it('describes a pending invitation to anyone with its link, and nothing else (404)', async () => {
      const existing = await createUser(t);
      const withAccount = await invite(existing.email, 'viewer');
      const withoutAccount = await invite(`preview-${Date.now()}@studio.example`, 'editor');
      const seen = await preview(withAccount.token, from()).expect(200);
      expect(seen.body).toEqual({
        organization: { name: `Studio ${existing.email}` },
        role: 'viewer',
        invitedBy: { name: withAccount.boss.body.user.name },
        email: existing.email,
        expiresAt: withAccount.invitation.expiresAt,
      });
      const other = await preview(withoutAccount.token, from()).expect(200);
      // The same fields whether or not the email has an account.
      expect(Object.keys(other.body).sort()).toEqual(Object.keys(seen.body).sort());
      expect(other.body).toMatchObject({ role: 'editor', email: withoutAccount.invitation.email });

      expectApiError(await preview(randomToken(), from()), 404, 'INVITATION_NOT_FOUND');
      expectApiError(await preview('not-a-token', from()), 404, 'INVITATION_NOT_FOUND');
      await accept(withoutAccount.token, from()).send({ name: 'P', password: 'a long passphrase' }).expect(200);
      expectApiError(await preview(withoutAccount.token, from()), 404, 'INVITATION_NOT_FOUND');
      await asSession(t, withAccount.boss, withAccount.org.id).delete(`/organization/invitations/${withAccount.invitation.id}`).expect(204);
      expectApiError(await preview(withAccount.token, from()), 404, 'INVITATION_NOT_FOUND');
      const expiring = await invite(`expiring-${Date.now()}@studio.example`);
      await preview(expiring.token, from()).expect(200);
      clock.advance(INVITATION_TTL_MS);
      expectApiError(await preview(expiring.token, from()), 404, 'INVITATION_NOT_FOUND');
    });

    it('answers login, session, acceptance and the invitation with Cache-Control: no-store, errors included', async () => {
      const user = await createUser(t);
      const noStore = (answer: { headers: Record<string, unknown> }) => expect(answer.headers['cache-control']).toBe('no-store');
      const address = from();
      noStore(await login(t, user.email).set('X-Forwarded-For', address).expect(200));
      noStore(await login(t, user.email, 'a wrong passphrase!').set('X-Forwarded-For', address).expect(401));
      noStore(await login(t, 'no-at-sign').set('X-Forwarded-For', address).expect(400));
      const me = await signIn(t, user.email);
      noStore(await asSession(t, me).get('/auth/session').expect(200));
      noStore(await request(t.http).get('/v1/auth/session').expect(401));
      const pending = await invite(`cache-${Date.now()}@studio.example`);
      noStore(await preview(pending.token, from()).expect(200));
      noStore(await preview(randomToken(), from()).expect(404));
      noStore(await accept(pending.token, from()).send({}).expect(401));
      noStore(await accept(pending.token, from()).send({ name: 'C', password: 'a long passphrase' }).expect(200));
      const joining = await invite(user.email);
      noStore(await asSession(t, me).post(`/auth/invitations/${joining.token}/accept`).set('X-Forwarded-For', from()).send({}).expect(204));
      const spent = from();
      for (let i = 0; i < 5; i += 1) await login(t, `nobody-${i}@studio.example`).set('X-Forwarded-For', spent).expect(401);
      noStore(await login(t, user.email).set('X-Forwarded-For', spent).expect(429));
    });
  });
});
