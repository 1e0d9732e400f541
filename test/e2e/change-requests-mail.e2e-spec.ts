import request from 'supertest';
import { ChangeRequestScheduler } from '../../src/change-requests/change-request-scheduler';
import { Outbox } from '../../src/outbox/outbox';
import { api, createFlag } from '../factories/flags.factory';
import { createOrganization, TestOrganization } from '../factories/organizations.factory';
import { addMember, asSession, memberSignedIn, SignedIn, signIn } from '../factories/people.factory';
import { expectApiError } from '../support/expect-error';
import { eventually } from '../support/eventually';
import { FakeClock } from '../support/fake-clock';
import { ReceivedMail, startSmtpServer, SmtpTestServer } from '../support/servers/smtp-server';
import { createTestApp, TestApp } from '../support/test-app';

const PUBLIC_URL = 'http://flagstore.test';
const FROM = 'Flagstore <flags@studio.example>';
const HOUR = 3_600_000;
const state = (value: unknown) => ({ name: 'XP', description: null, type: 'number', value, runtime: 'shared', archived: false });
/** A mail's text, its quoted-printable soft breaks and escapes undone. */
const textOf = (mail: ReceivedMail) =>
  mail.body.replace(/=\r\n/g, '').replace(/=([0-9A-F]{2})/g, (_match, hex: string) => String.fromCharCode(parseInt(hex, 16)));

/**
 * Mail about change requests (decisions.md, "Change requests (turn 5)", Listing and hearing), through the outbox to a
 * real SMTP server on loopback: the reviewers when a request opens, its author when it is decided, applied or failed;
 * each person may turn it off (PATCH /v1/auth/me). The app runs on a FakeClock: mail goes out when the test calls
 * Outbox.deliverDue, and the scheduler's tick runs when the test moves the time.
 */
describe('change request mail', () => {
  const clock = new FakeClock(Date.parse('2026-12-04T12:00:00Z'));
  let smtp: SmtpTestServer;
  let t: TestApp;
  let off: TestApp;
  let org: TestOrganization;
  let author: SignedIn;
  let editor: SignedIn;
  let admin: SignedIn;
  let viewer: SignedIn;

  beforeAll(async () => {
    smtp = await startSmtpServer();
    t = await createTestApp({ PUBLIC_URL, SMTP_URL: smtp.url, MAIL_FROM: FROM }, { clock });
    off = await createTestApp({ PUBLIC_URL }, { clock, sameDatabaseAs: t });
  });
  afterAll(async () => {
    await off?.close();
    await t?.close();
    await smtp?.close();
  });
  beforeEach(async () => {
    org = await createOrganization(t, 'Mailed Studio');
    [author, editor, admin, viewer] = await Promise.all([
      memberSignedIn(t, org.id, 'editor'),
      memberSignedIn(t, org.id, 'editor'),
      memberSignedIn(t, org.id, 'admin'),
      memberSignedIn(t, org.id, 'viewer'),
    ]);
  });

  const as = (who: SignedIn, app: TestApp = t) => asSession(app, who, org.id);
  const open = async (who: SignedIn | string = author, body: object = {}, app: TestApp = t) => {
    const caller = typeof who === 'string' ? api(app, who) : as(who, app);
    return (
      await caller
        .post('/change-requests')
        .send({ title: 'XP weekend', changes: [{ key: 'xp', after: state(2) }], ...body })
        .expect(201)
    ).body as { id: string };
  };
  /** The mails written since the outbox held `before` rows: to whom, and about what. */
  const outboxCount = async (): Promise<string[]> =>
    (await t.db.query(`SELECT id FROM outbox WHERE channel = 'mail'`)).rows.map((row: { id: string }) => row.id);
  const mailedSince = async (before: string[]) =>
    (
      await t.db.query(
        `SELECT payload->>'to' AS "to", payload->>'subject' AS subject FROM outbox WHERE channel = 'mail' AND NOT id = ANY ($1::uuid[])
         ORDER BY payload->>'to'`,
        [before],
      )
    ).rows as { to: string; subject: string }[];
  const emailOf = (who: SignedIn) => who.body.user.email as string;
  /** Delivers what is due and answers the mail with `subject` that arrived at `to`. */
  const delivered = async (to: string, subject: string): Promise<ReceivedMail> => {
    const find = () => smtp.received.find((mail) => mail.envelope.to.includes(to) && mail.subject === subject);
    await eventually(
      async () => {
        if (find()) return true;
        await t.app.get(Outbox).deliverDue();
        return find() !== undefined;
      },
      { what: `a mail to ${to}` },
    );
    return find()!;
  };

  describe('when a request opens', () => {
    it('mails each editor and admin with a verified email and review mail on, once, never the author, a viewer or another organization', async () => {
      const unverified = await memberSignedIn(t, org.id, 'editor');
      await t.db.query('UPDATE users SET email_verified_at = NULL WHERE id = $1', [unverified.userId]);
      const optedOut = await memberSignedIn(t, org.id, 'admin');
      await as(optedOut).patch('/auth/me').send({ reviewMail: false }).expect(200);
      const left = await memberSignedIn(t, org.id, 'editor');
      await t.db.query('UPDATE memberships SET left_at = now() WHERE user_id = $1', [left.userId]);
      const other = await createOrganization(t, 'Other Studio');
      const outsider = await memberSignedIn(t, other.id, 'admin');
      // A member of both gets one mail.
      await addMember(t, other.id, editor.userId, 'admin');

      const before = await outboxCount();
      const cr = await open(author, { title: 'XP weekend' });
      const mailed = await mailedSince(before);
      expect(mailed.map((mail) => mail.to).sort()).toEqual([emailOf(editor), emailOf(admin)].sort());
      expect(mailed.map((mail) => mail.to)).not.toContain(emailOf(outsider));
      expect(mailed[0].subject).toBe('Change request to review in Mailed Studio: XP weekend');

      const toEditor = await delivered(emailOf(editor), mailed[0].subject);
      expect(toEditor.envelope.from).toBe('flags@studio.example');
      const text = textOf(toEditor);
      expect(text).toContain(`${author.body.user.name} opened a change request in Mailed Studio`);
      expect(text).toContain('XP weekend');
      expect(text).toContain(`${PUBLIC_URL}/console/change-requests/${cr.id}?org=${org.id}`);
    });

    it('by a key, mails every reviewer (the key is nobody to leave out); a request made of an import mails too', async () => {
      let before = await outboxCount();
      await open(org.key);
      expect((await mailedSince(before)).map((mail) => mail.to).sort()).toEqual([emailOf(author), emailOf(editor), emailOf(admin)].sort());
      expect((await mailedSince(before))[0].subject).toMatch(/XP weekend/);

      before = await outboxCount();
      await as(author)
        .post('/flags/import')
        .send({ requestReview: true, flags: [{ key: 'imported', ...state(3) }] })
        .expect(201);
      expect((await mailedSince(before)).map((mail) => mail.to).sort()).toEqual([emailOf(editor), emailOf(admin)].sort());
    });

    it('an open that fails writes no mail', async () => {
      const before = await outboxCount();
      await as(author)
        .post('/change-requests')
        .send({ title: '', changes: [{ key: 'xp', after: state(2) }] })
        .expect(400);
      expect(await mailedSince(before)).toEqual([]);
    });
  });

  describe('to the author', () => {
    it('says a request was approved (enough approvals), then applied by hand, with who and the link', async () => {
      await t.db.query(
        `INSERT INTO organization_review_settings (organization_id, required, approvals, self_approval, updated_at) VALUES ($1, false, 2, false, now())`,
        [org.id],
      );
      const cr = await open();
      let before = await outboxCount();
      await as(editor).post(`/change-requests/${cr.id}/reviews`).send({ decision: 'approve' }).expect(201);
      expect(await mailedSince(before)).toEqual([]); // one of two approvals: nothing decided yet
      await as(admin).post(`/change-requests/${cr.id}/reviews`).send({ decision: 'approve', comment: 'Ship it' }).expect(201);
      expect(await mailedSince(before)).toEqual([{ to: emailOf(author), subject: 'Your change request in Mailed Studio was approved: XP weekend' }]);
      const mail = await delivered(emailOf(author), 'Your change request in Mailed Studio was approved: XP weekend');
      expect(textOf(mail)).toContain(`was approved by ${admin.body.user.name}:`);
      expect(textOf(mail)).toContain('Ship it');
      expect(textOf(mail)).toContain(`${PUBLIC_URL}/console/change-requests/${cr.id}?org=${org.id}`);

      before = await outboxCount();
      await as(editor).post(`/change-requests/${cr.id}/apply`).send({}).expect(200);
      expect(await mailedSince(before)).toEqual([{ to: emailOf(author), subject: 'Your change request in Mailed Studio was applied: XP weekend' }]);
    });

    it('says a request was declined, and one applied by an admin’s override', async () => {
      const declined = await open();
      let before = await outboxCount();
      await as(editor).post(`/change-requests/${declined.id}/reviews`).send({ decision: 'decline', comment: 'Not this week' }).expect(201);
      expect(await mailedSince(before)).toEqual([{ to: emailOf(author), subject: 'Your change request in Mailed Studio was declined: XP weekend' }]);

      const overridden = await open(author, { title: 'Hotfix' });
      before = await outboxCount();
      await as(admin)
        .post(`/change-requests/${overridden.id}/apply`)
        .send({ override: { reason: 'Outage' } })
        .expect(200);
      expect(await mailedSince(before)).toEqual([{ to: emailOf(author), subject: 'Your change request in Mailed Studio was applied: Hotfix' }]);
    });

    it('says a scheduled apply happened, or failed with the reason', async () => {
      const flag = await createFlag(t, org.key, { key: 'xp', name: 'XP', type: 'number', value: 1 });
      const applied = await open(author, { changes: [{ key: 'xp', after: state(2) }], applyAt: new Date(clock.now() + HOUR).toISOString() });
      const failing = await open(author, {
        title: 'Later',
        changes: [{ key: 'xp', after: state(3) }],
        applyAt: new Date(clock.now() + 2 * HOUR).toISOString(),
      });
      await as(editor).post(`/change-requests/${applied.id}/reviews`).send({ decision: 'approve' }).expect(201);
      await as(editor).post(`/change-requests/${failing.id}/reviews`).send({ decision: 'approve' }).expect(201);
      let before = await outboxCount();
      clock.advance(HOUR + 1000);
      await t.app.get(ChangeRequestScheduler).tick();
      expect(await mailedSince(before)).toEqual([{ to: emailOf(author), subject: 'Your change request in Mailed Studio was applied: XP weekend' }]);
      expect((await api(t, org.key).get(`/flags/${flag.id}`).expect(200)).body.value).toBe(2);

      before = await outboxCount();
      clock.advance(HOUR);
      await t.app.get(ChangeRequestScheduler).tick();
      expect(await mailedSince(before)).toEqual([{ to: emailOf(author), subject: 'Your change request in Mailed Studio failed: Later' }]);
      const mail = await delivered(emailOf(author), 'Your change request in Mailed Studio failed: Later');
      expect(textOf(mail)).toContain('CHANGE_REQUEST_STALE');
    });

    it('is nobody when the author is a key, and not a person who turned it off', async () => {
      const byKey = await open(org.key);
      let before = await outboxCount();
      await as(editor).post(`/change-requests/${byKey.id}/reviews`).send({ decision: 'decline' }).expect(201);
      expect(await mailedSince(before)).toEqual([]);

      await as(author).patch('/auth/me').send({ reviewMail: false }).expect(200);
      const cr = await open();
      before = await outboxCount();
      await as(editor).post(`/change-requests/${cr.id}/reviews`).send({ decision: 'decline' }).expect(201);
      expect(await mailedSince(before)).toEqual([]);
      // Back on: mailed again.
      await as(author).patch('/auth/me').send({ reviewMail: true }).expect(200);
      const again = await open();
      before = await outboxCount();
      await as(editor).post(`/change-requests/${again.id}/reviews`).send({ decision: 'decline' }).expect(201);
      expect((await mailedSince(before)).map((mail) => mail.to)).toEqual([emailOf(author)]);
    });
  });

  it('with mail off, nothing is written: not on open, review or apply', async () => {
    const before = await outboxCount();
    const cr = await open(author, {}, off);
    await as(editor, off).post(`/change-requests/${cr.id}/reviews`).send({ decision: 'approve' }).expect(201);
    await as(author, off).post(`/change-requests/${cr.id}/apply`).send({}).expect(200);
    expect(await mailedSince(before)).toEqual([]);
  });

  describe('PATCH /v1/auth/me', () => {
    it('stores reviewMail per person, shown in the session; the others keep theirs', async () => {
      expect((await request(t.http).get('/v1/auth/session').set('Cookie', viewer.cookie).expect(200)).body.user.reviewMail).toBe(true);
      const answer = await as(viewer).patch('/auth/me').send({ reviewMail: false }).expect(200);
      expect(answer.body).toEqual({ id: viewer.userId, email: emailOf(viewer), name: viewer.body.user.name, emailVerified: true, reviewMail: false });
      expect(answer.headers['cache-control']).toBe('no-store');
      expect((await request(t.http).get('/v1/auth/session').set('Cookie', viewer.cookie).expect(200)).body.user.reviewMail).toBe(false);
      const again = await signIn(t, emailOf(viewer));
      expect((again.body.user as { reviewMail?: boolean }).reviewMail).toBe(false);
      expect((await request(t.http).get('/v1/auth/session').set('Cookie', editor.cookie).expect(200)).body.user.reviewMail).toBe(true);
    });

    it('is in the OpenAPI document: the route, its body, and reviewMail in the session’s user', async () => {
      const document = (await request(t.http).get('/docs-json').expect(200)).body;
      const operation = document.paths['/v1/auth/me'].patch;
      expect(Object.keys(operation.responses)).toEqual(expect.arrayContaining(['200', '400', '401', '403']));
      const schemas = document.components.schemas;
      expect(schemas.UpdateMeDto).toMatchObject({ properties: { reviewMail: { type: 'boolean' } }, required: ['reviewMail'] });
      expect(schemas.SessionUserDto.properties.reviewMail).toMatchObject({ type: 'boolean' });
      expect(schemas.SessionUserDto.required).toContain('reviewMail');
    });

    it('refuses the anonymous (401), a key (401: not a session), a session without CSRF (403) and bad bodies (400 naming reviewMail)', async () => {
      expect((await request(t.http).patch('/v1/auth/me').send({ reviewMail: false })).status).toBe(401);
      expect((await request(t.http).patch('/v1/auth/me').set('Authorization', `Bearer ${org.key}`).send({ reviewMail: false })).status).toBe(401);
      expectApiError(await asSession(t, viewer, undefined, { csrf: false }).patch('/auth/me').send({ reviewMail: false }), 403, 'CSRF_TOKEN_INVALID');
      for (const body of [{}, { reviewMail: 'no' }, { reviewMail: null }, { reviewMail: 0 }]) {
        expectApiError(await asSession(t, viewer).patch('/auth/me').send(body), 400, 'VALIDATION_ERROR', /reviewMail/);
      }
      expectApiError(await asSession(t, viewer).patch('/auth/me').send({ reviewMail: true, email: 'x@y.example' }), 400, 'VALIDATION_ERROR', /email/);
      expect((await request(t.http).get('/v1/auth/session').set('Cookie', viewer.cookie).expect(200)).body.user.reviewMail).toBe(true);
    });
  });
});
