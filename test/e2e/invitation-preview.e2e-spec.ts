import { randomBytes } from 'node:crypto';
import request from 'supertest';
import { admin, createOrganization, TestOrganization } from '../factories/organizations.factory';
import { addMember, asSession, createUser, signIn, SignedIn } from '../factories/people.factory';
import { Sql } from '../../src/database/sql';
import { INVITATION_TTL_MS } from '../../src/people/people.service';
import { expectApiError } from '../support/expect-error';
import { FakeClock } from '../support/fake-clock';
import { createTestApp, TestApp } from '../support/test-app';

const BUDGET = 5;

/**
 * The invitation page's read (decisions.md, "A studio's own deployment", issue 33's first hour): GET
 * /v1/auth/invitations/{token}, anonymous, names the organization, the role and who invited for a pending invitation,
 * answers one 404 for every other link, spends the address's sign-in budget only when it finds nothing, and answers
 * alike whether or not the invited email has an account.
 */
describe('reading an invitation by its link', () => {
  const clock = new FakeClock();
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ SIGN_IN_FAILURES_PER_MINUTE: String(BUDGET) }, { clock });
  });
  afterAll(() => t.close());

  let addresses = 0;
  const from = () => `192.0.2.${(addresses += 1)}`;
  const read = (token: string, address = from()) => request(t.http).get(`/v1/auth/invitations/${token}`).set('X-Forwarded-For', address);
  const tokenOf = (url: string) => url.split('/').pop()!;
  const randomToken = () => randomBytes(32).toString('base64url');

  /** An organization with an admin named `inviterName`, signed in. */
  async function studio(name: string, inviterName = 'Maya Okafor'): Promise<{ org: TestOrganization; boss: SignedIn }> {
    const org = await createOrganization(t, name);
    const user = await createUser(t, { name: inviterName });
    await addMember(t, org.id, user.id, 'admin');
    return { org, boss: await signIn(t, user.email) };
  }
  const invite = async (boss: SignedIn, org: TestOrganization, email: string, role = 'editor') => {
    const created = await asSession(t, boss, org.id).post('/organization/invitations').send({ email, role }).expect(201);
    return { id: created.body.id as string, token: tokenOf(created.body.url), expiresAt: created.body.expiresAt as string };
  };

  it('names the organization, the role and who invited a pending invitation, to anyone with the link', async () => {
    const { org, boss } = await studio('Acme Games');
    for (const role of ['viewer', 'editor', 'admin']) {
      const email = `${role}-${Date.now()}@studio.example`;
      const invitation = await invite(boss, org, email, role);
      const answer = await read(invitation.token).expect(200);
      expect(answer.body).toEqual({
        organization: { name: 'Acme Games' },
        role,
        invitedBy: { name: 'Maya Okafor' },
        email,
        expiresAt: invitation.expiresAt,
      });
      expect(answer.headers['cache-control']).toBe('no-store');
    }
  });

  it('answers the same 404 for an unknown, malformed, accepted, withdrawn or expired link', async () => {
    const { org, boss } = await studio('Acme Games');
    const accepted = await invite(boss, org, `accepted-${Date.now()}@studio.example`);
    await read(accepted.token).expect(200);
    await request(t.http)
      .post(`/v1/auth/invitations/${accepted.token}/accept`)
      .set('X-Forwarded-For', from())
      .send({ name: 'Sam', password: 'a long passphrase' })
      .expect(200);
    const withdrawn = await invite(boss, org, `withdrawn-${Date.now()}@studio.example`);
    await asSession(t, boss, org.id).delete(`/organization/invitations/${withdrawn.id}`).expect(204);
    // A newer invitation for the same email replaces the older: the old link is spent too.
    const replacedEmail = `replaced-${Date.now()}@studio.example`;
    const replaced = await invite(boss, org, replacedEmail);
    await invite(boss, org, replacedEmail);
    const expiring = await invite(boss, org, `expiring-${Date.now()}@studio.example`);
    await read(expiring.token).expect(200);
    clock.advance(INVITATION_TTL_MS);

    const answers = [
      await read(randomToken()),
      await read('not-a-token'),
      await read(accepted.token),
      await read(withdrawn.token),
      await read(replaced.token),
      await read(expiring.token),
    ];
    for (const answer of answers) expectApiError(answer, 404, 'INVITATION_NOT_FOUND');
    expect(new Set(answers.map((answer) => JSON.stringify(answer.body))).size).toBe(1);
  });

  it('never tells whether the invited email has an account: the same fields, headers and work for both', async () => {
    const { org, boss } = await studio('Acme Games');
    const existing = await createUser(t, { name: 'Has An Account' });
    const withAccount = await invite(boss, org, existing.email, 'viewer');
    const withoutAccount = await invite(boss, org, `newcomer-${Date.now()}@studio.example`, 'viewer');
    // An account that belongs to another organization, and one deleted since: no different either.
    const elsewhere = await studio('Elsewhere');
    const member = await createUser(t);
    await addMember(t, elsewhere.org.id, member.id, 'editor');
    const withMembership = await invite(boss, org, member.email, 'viewer');
    const gone = await createUser(t);
    await admin(t).delete(`/users/${gone.id}`).expect(204);
    const withDeletedAccount = await invite(boss, org, gone.email, 'viewer');

    // What each read asks the database about invitations and users: the same statements whatever the email.
    const statements = jest.spyOn(t.app.get(Sql), 'rows');
    const answers: request.Response[] = [];
    const work: string[][] = [];
    for (const invitation of [withAccount, withoutAccount, withMembership, withDeletedAccount]) {
      statements.mockClear();
      answers.push(await read(invitation.token).expect(200));
      work.push(statements.mock.calls.map(([sql]) => sql).filter((sql) => /invitations|users/.test(sql)));
    }
    statements.mockRestore();
    expect(work[0]).toHaveLength(1);
    for (const statementsOfOne of work.slice(1)) expect(statementsOfOne).toEqual(work[0]);
    const shape = (answer: request.Response) => ({
      body: { ...answer.body, email: '<email>', expiresAt: '<expiresAt>' },
      headers: Object.keys(answer.headers)
        .filter((name) => !['date', 'etag', 'content-length', 'x-request-id'].includes(name))
        .sort()
        .map((name) => [name, name === 'set-cookie' ? '<cookie>' : answer.headers[name]]),
    });
    for (const answer of answers.slice(1)) expect(shape(answer)).toEqual(shape(answers[0]));
    expect(answers.map((answer) => answer.body.email)).toEqual([existing.email, expect.stringMatching(/^newcomer-/), member.email, gone.email]);
  });

  it('spends the address budget only on links that find nothing: 429 with Retry-After after that', async () => {
    const { org, boss } = await studio('Acme Games');
    const pending = await invite(boss, org, `budget-${Date.now()}@studio.example`);
    const address = from();
    // A working link reads as often as the person likes.
    for (let i = 0; i < BUDGET * 2; i += 1) await read(pending.token, address).expect(200);
    const guesses = [];
    for (let i = 0; i < BUDGET + 2; i += 1) guesses.push(await read(randomToken(), address));
    expect(guesses.map((answer) => answer.status)).toEqual([...Array(BUDGET).fill(404), 429, 429]);
    expectApiError(guesses[BUDGET], 429, 'RATE_LIMITED', /from this address/);
    expect(Number(guesses[BUDGET].headers['retry-after'])).toBeGreaterThan(0);
    expect(guesses[BUDGET].headers['cache-control']).toBe('no-store');
    // Spent, even a working link waits: the budget is checked before anything is looked up.
    expectApiError(await read(pending.token, address), 429, 'RATE_LIMITED');
    // Guesses at once take no more than the budget.
    const other = from();
    const burst = await Promise.all(Array.from({ length: BUDGET + 4 }, () => read(randomToken(), other)));
    expect(burst.map((answer) => answer.status).sort()).toEqual([...Array(BUDGET).fill(404), ...Array(4).fill(429)]);
    // Another address is not held back, and the budget comes back with time.
    await read(pending.token, from()).expect(200);
    clock.advance(61_000);
    await read(pending.token, address).expect(200);
  });
});
