import { createServer } from 'node:net';
import { Client } from 'pg';
import { Sql } from '../../src/database/sql';
import { Transactions } from '../../src/database/transactions';
import { MAIL_ATTEMPT_TIMEOUT_MS } from '../../src/mail/mail-channel';
import { MailMessage } from '../../src/mail/mail-message';
import { Mailer } from '../../src/mail/mailer';
import { ChangeFeed } from '../../src/invalidation/change-feed';
import { Outbox, OUTBOX_TICK_MS } from '../../src/outbox/outbox';
import { eventually } from '../support/eventually';
import { FakeClock } from '../support/fake-clock';
import { LogCapture } from '../support/log-capture';
import { startSmtpServer, SmtpTestServer } from '../support/servers/smtp-server';
import { createTestApp, TestApp } from '../support/test-app';

const FROM = 'Flagstore <flags@studio.example>';
const HOUR = 3_600_000;
const LEASE_MS = 2 * MAIL_ATTEMPT_TIMEOUT_MS;

interface OutboxRecord {
  id: string;
  channel: string;
  payload: Record<string, unknown>;
  state: string;
  attempts: number;
  next_attempt_at: Date;
  last_error: string | null;
  created_at: Date;
  delivered_at: Date | null;
}

/**
 * Mail through the outbox (decisions.md, "Trust", Mail; "Webhooks", Delivery), against a real SMTP server on loopback
 * (the `smtp-server` package), never a mock of the sender. Apps on a FakeClock deliver only when a test calls
 * `Outbox.deliverDue` (what the clock's timer runs every OUTBOX_TICK_MS), after moving the time if the retry policy's
 * waits are long; apps on the real clock deliver by themselves.
 */
describe('mail through the outbox', () => {
  let smtp: SmtpTestServer;
  const mailEnv = () => ({ SMTP_URL: smtp.url, MAIL_FROM: FROM });
  const message = (subject: string, extra: Partial<MailMessage> = {}): MailMessage => ({
    to: 'frank@a.example',
    subject,
    text: `Hello Frank,\r\nthis is "${subject}".\r\n`,
    ...extra,
  });
  /** Sends `messages` through `app`'s Mailer in one transaction that commits, answering the outbox ids. */
  const commit = (app: TestApp, ...messages: MailMessage[]) =>
    app.app.get(Transactions).run(async (tx) => {
      const ids: string[] = [];
      for (const mail of messages) ids.push(await app.app.get(Mailer).send(tx, mail));
      return ids;
    });
  const rowsOf = async (app: TestApp): Promise<OutboxRecord[]> =>
    (await app.db.query<OutboxRecord>('SELECT * FROM outbox ORDER BY created_at, id')).rows;
  const rowOf = async (app: TestApp, id: string): Promise<OutboxRecord> =>
    (await app.db.query<OutboxRecord>('SELECT * FROM outbox WHERE id = $1', [id])).rows[0];
  const deliverDue = (app: TestApp) => app.app.get(Outbox).deliverDue();

  beforeAll(async () => {
    smtp = await startSmtpServer();
  });
  afterAll(() => smtp.close());
  beforeEach(async () => {
    smtp.received.length = 0;
    smtp.mode = 'accept';
    smtp.replyDelayMs = 0;
    await smtp.start(); // up, whatever the previous test left
  });

  describe('on the real clock', () => {
    let t: TestApp;
    const log = new LogCapture();
    beforeAll(async () => {
      t = await createTestApp({ ...mailEnv(), LOG_LEVEL: 'info' }, { logDestination: log });
    });
    afterAll(() => t.close());

    it('sends a mail written in a committed transaction, From MAIL_FROM, logged in, and keeps only its address and subject', async () => {
      expect(t.app.get(Mailer).enabled).toBe(true);
      const [id] = await commit(t, message('Your invitation to Studio A', { html: '<p>Hello <b>Frank</b></p>' }));
      const [mail] = await smtp.waitFor(1);
      expect(mail.envelope).toEqual({ from: 'flags@studio.example', to: ['frank@a.example'] });
      expect(mail.from).toBe('Flagstore <flags@studio.example>');
      expect(mail.to).toBe('frank@a.example');
      expect(mail.subject).toBe('Your invitation to Studio A');
      expect(mail.messageId).toBe(`<${id}@studio.example>`);
      expect(mail.body).toContain('Hello Frank,\r\nthis is "Your invitation to Studio A".');
      expect(mail.body).toContain('<p>Hello <b>Frank</b></p>');
      await eventually(async () => (await rowOf(t, id)).state === 'succeeded', { what: 'the row recorded as delivered' });
      const row = await rowOf(t, id);
      expect(row).toMatchObject({ channel: 'mail', state: 'succeeded', attempts: 1, last_error: null, delivered_at: expect.any(Date) });
      // The body (a single-use link, say) does not stay in the table once it went out.
      expect(row.payload).toEqual({ to: 'frank@a.example', subject: 'Your invitation to Studio A' });
      expect(await t.app.get(Mailer).delivery(t.app.get(Sql), id)).toMatchObject({
        id,
        channel: 'mail',
        state: 'succeeded',
        attempts: 1,
        lastError: null,
      });
    });

    it('sends nothing for a transaction that rolls back', async () => {
      await expect(
        t.app.get(Transactions).run(async (tx) => {
          await t.app.get(Mailer).send(tx, message('Rolled back'));
          throw new Error('the change failed');
        }),
      ).rejects.toThrow('the change failed');
      // A mail committed afterwards goes out; the rolled-back one never does, and left no row.
      const [marker] = await commit(t, message('Committed afterwards'));
      await smtp.waitFor(1);
      await eventually(async () => (await rowOf(t, marker)).state === 'succeeded');
      expect(smtp.received.map((mail) => mail.subject)).toEqual(['Committed afterwards']);
      expect((await rowsOf(t)).filter((row) => row.payload.subject === 'Rolled back')).toEqual([]);
    });

    it('refuses a malformed message before writing anything', async () => {
      const before = (await rowsOf(t)).length;
      for (const bad of [
        message('Two', { to: 'a@a.example, b@b.example' }),
        message('Line\r\nBcc: x@evil.example'),
        message('No text', { text: '' }),
      ]) {
        await expect(t.app.get(Transactions).run((tx) => t.app.get(Mailer).send(tx, bad))).rejects.toThrow(/^A mail that cannot be sent: /);
      }
      expect((await rowsOf(t)).length).toBe(before);
    });

    it('says at boot that mail is on and through which server, and never logs the SMTP password', async () => {
      expect(log.lines.filter((line) => line.context === 'Mail')).toEqual([
        expect.objectContaining({ msg: `Mail is on: sent through smtp://127.0.0.1:${smtp.port} from ${FROM}` }),
      ]);
      // A failed attempt is logged with the server's answer, and still without the password.
      await smtp.stop();
      const [id] = await commit(t, message('While the server is down'));
      await eventually(async () => (await rowOf(t, id)).last_error !== null, { what: 'a failed attempt recorded' });
      expect(log.lines).toContainEqual(expect.objectContaining({ msg: 'outbox row will be retried', outboxId: id, channel: 'mail', attempt: 1 }));
      expect(log.text).not.toContain(smtp.password);
      expect(JSON.stringify(await rowsOf(t))).not.toContain(smtp.password);
    });
  });

  describe('on a clock the test moves', () => {
    const clock = new FakeClock(Date.parse('2026-12-01T09:00:00Z'));
    let t: TestApp;
    beforeAll(async () => {
      t = await createTestApp(mailEnv(), { clock });
    });
    afterAll(() => t.close());

    it("sends a mail written here at the instance's next tick, and one written elsewhere once the change feed has read it", async () => {
      const outbox = t.app.get(Outbox);
      // Written by another instance (as its enqueue would): this one hears of it with the change feed's next read.
      const now = clock.date();
      const {
        rows: [{ id: elsewhere }],
      } = await t.db.query<{ id: string }>(
        `INSERT INTO outbox (channel, payload, next_attempt_at, created_at) VALUES ('mail', $1, $2, $2) RETURNING id`,
        [JSON.stringify(message('Written elsewhere')), now],
      );
      await outbox.tick();
      expect(smtp.received).toEqual([]);
      await t.app.get(ChangeFeed).tick();
      await outbox.tick();
      expect(smtp.received.map((mail) => mail.subject)).toEqual(['Written elsewhere']);
      expect(await rowOf(t, elsewhere)).toMatchObject({ state: 'succeeded' });

      // Written here: the next tick sends it, without waiting for the feed.
      await commit(t, message('Written here'));
      await outbox.tick();
      expect(smtp.received.map((mail) => mail.subject)).toEqual(['Written elsewhere', 'Written here']);
      expect(clock.intervals).toContain(OUTBOX_TICK_MS);
    });

    it('retries while the server is down or busy, and delivers the mail once when it is back', async () => {
      await smtp.stop();
      const [id] = await commit(t, message('Retried'));
      const createdAt = clock.now();
      expect(await deliverDue(t)).toEqual([
        expect.objectContaining({ id, attempt: 1, outcome: 'retry', error: expect.stringMatching(/ECONNREFUSED/) }),
      ]);
      let row = await rowOf(t, id);
      expect(row).toMatchObject({ state: 'pending', attempts: 1, last_error: expect.stringMatching(/ECONNREFUSED/) });
      // The first retry: 30 s ± 20 %.
      expect(row.next_attempt_at.getTime() - createdAt).toBeGreaterThanOrEqual(24_000);
      expect(row.next_attempt_at.getTime() - createdAt).toBeLessThanOrEqual(36_000);

      // Up again, but the retry is not due yet: nothing is sent before its time.
      await smtp.start();
      expect(await deliverDue(t)).toEqual([]);

      // Due, and a server answers but is busy (421, closing): another retry, two minutes or so later.
      const busy = await startBusy(smtp);
      clock.set(row.next_attempt_at);
      expect(await deliverDue(t)).toEqual([expect.objectContaining({ id, attempt: 2, outcome: 'retry', error: expect.stringMatching(/421/) })]);
      await busy.end();
      row = await rowOf(t, id);
      expect(row.next_attempt_at.getTime() - clock.now()).toBeGreaterThanOrEqual(96_000);

      clock.set(row.next_attempt_at);
      expect(await deliverDue(t)).toEqual([expect.objectContaining({ id, attempt: 3, outcome: 'succeeded' })]);
      expect(smtp.received.map((mail) => mail.subject)).toEqual(['Retried']);
      expect(await rowOf(t, id)).toMatchObject({ state: 'succeeded', attempts: 3, delivered_at: clock.date(), last_error: null });

      // Delivered once: nothing is due afterwards, however much time passes.
      clock.advance(48 * HOUR);
      expect(await deliverDue(t)).toEqual([]);
      expect(smtp.received).toHaveLength(1);
    });

    it('gives up after 24 hours of a server that never answers, keeping the last error', async () => {
      await smtp.stop();
      const [id] = await commit(t, message('Never delivered'));
      const createdAt = clock.now();
      let attempts = 0;
      for (;;) {
        const [outcome] = await deliverDue(t);
        attempts += 1;
        expect(outcome).toMatchObject({ id, attempt: attempts });
        if (outcome.outcome === 'failed') break;
        expect(outcome.outcome).toBe('retry');
        clock.set((await rowOf(t, id)).next_attempt_at);
      }
      expect(clock.now() - createdAt).toBeLessThanOrEqual(24 * HOUR);
      expect(clock.now() - createdAt).toBeGreaterThan(21 * HOUR);
      expect(attempts).toBeGreaterThanOrEqual(13);
      expect(attempts).toBeLessThanOrEqual(22);
      expect(await rowOf(t, id)).toMatchObject({
        state: 'failed',
        attempts,
        last_error: expect.stringMatching(/ECONNREFUSED/),
        delivered_at: null,
        payload: { to: 'frank@a.example', subject: 'Never delivered' },
      });
      clock.advance(48 * HOUR);
      await smtp.start();
      expect(await deliverDue(t)).toEqual([]);
      expect(smtp.received).toEqual([]);
    });

    it('skips a row another instance is claiming at that moment, without waiting for it, and never takes it twice', async () => {
      const [id] = await commit(t, message('Claimed elsewhere'));
      // Another instance's claim of the row, not committed yet: the row is locked.
      const other = new Client({ connectionString: t.adminDatabaseUrl });
      await other.connect();
      try {
        await other.query('BEGIN');
        await other.query('UPDATE outbox SET attempts = attempts + 1, next_attempt_at = $2 WHERE id = $1', [id, new Date(clock.now() + LEASE_MS)]);
        const here = deliverDue(t);
        const blocked = new Promise((resolve) => setTimeout(() => resolve('waited for the lock'), 3_000));
        expect(await Promise.race([here, blocked])).toEqual([]);
        await other.query('COMMIT');
        await here;
      } finally {
        await other.end();
      }
      // Now leased by the other instance: not due here either.
      expect(await deliverDue(t)).toEqual([]);
      expect(smtp.received).toEqual([]);
      expect(await rowOf(t, id)).toMatchObject({ state: 'pending', attempts: 1 });
    });

    it('gives up at once on a recipient the server refuses for good (550)', async () => {
      smtp.mode = 'refuse-recipients';
      const [id] = await commit(t, message('No such mailbox'));
      expect(await deliverDue(t)).toEqual([
        expect.objectContaining({ id, attempt: 1, outcome: 'failed', error: expect.stringMatching(/refused the recipient.*550/) }),
      ]);
      expect(await rowOf(t, id)).toMatchObject({ state: 'failed', attempts: 1 });
    });
  });

  describe('on several instances of one deployment', () => {
    it('delivers a row claimed by an instance that died mid-send, once its lease has run out, from another instance', async () => {
      const clock = new FakeClock(Date.parse('2026-12-02T09:00:00Z'));
      const b = await createTestApp(mailEnv(), { clock });
      const a = await createTestApp(mailEnv(), { clock, sameDatabaseAs: b });
      try {
        smtp.mode = 'hold'; // A's send hangs: the server never greets
        const [id] = await commit(a, message('Lease'));
        const dying = deliverDue(a).catch(() => undefined);
        await eventually(async () => (await rowOf(b, id)).attempts === 1, { what: "A's claim" });
        expect((await rowOf(b, id)).next_attempt_at.getTime()).toBe(clock.now() + LEASE_MS);
        await a.close(); // A goes away with the mail still out

        // The server is back (A's connection is cut); the row stays A's until its lease runs out.
        await smtp.stop();
        smtp.mode = 'accept';
        await smtp.start();
        await dying;
        expect(await deliverDue(b)).toEqual([]);
        clock.advance(LEASE_MS - 1);
        expect(await deliverDue(b)).toEqual([]);
        clock.advance(1);
        expect(await deliverDue(b)).toEqual([expect.objectContaining({ id, attempt: 2, outcome: 'succeeded' })]);
        expect(smtp.received.map((mail) => mail.subject)).toEqual(['Lease']);
        expect(await rowOf(b, id)).toMatchObject({ state: 'succeeded', attempts: 2 });
      } finally {
        await a.close().catch(() => undefined);
        await b.close();
      }
    });

    it('delivers each of a burst of 50 mails exactly once with two instances working', async () => {
      const a = await createTestApp(mailEnv());
      const b = await createTestApp(mailEnv(), { sameDatabaseAs: a });
      try {
        const subjects = Array.from({ length: 50 }, (_, index) => `Burst ${index}`);
        // Written half through each instance, in several transactions, so both are woken at once.
        await Promise.all([
          commit(a, ...subjects.slice(0, 15).map((subject) => message(subject))),
          commit(b, ...subjects.slice(15, 30).map((subject) => message(subject))),
          commit(a, ...subjects.slice(30, 40).map((subject) => message(subject))),
          commit(b, ...subjects.slice(40).map((subject) => message(subject))),
        ]);
        await smtp.waitFor(50, 20_000);
        await eventually(async () => (await rowsOf(a)).every((row) => row.state === 'succeeded'), {
          timeoutMs: 10_000,
          what: 'every row recorded as delivered',
        });
        // Both instances look again (more than a tick each) and find nothing left to send.
        await new Promise((resolve) => setTimeout(resolve, 600));
        expect(smtp.received.map((mail) => mail.subject).sort()).toEqual([...subjects].sort());
        expect((await rowsOf(a)).map((row) => row.attempts)).toEqual(Array(50).fill(1));
      } finally {
        await b.close();
        await a.close();
      }
    });

    it('loses nothing at shutdown: mails written just before an instance closes all go out, once, from the next start', async () => {
      // The deployment's database is kept by an instance on a held clock with mail off: it delivers nothing itself.
      const keeper = await createTestApp({}, { clock: new FakeClock() });
      try {
        const a = await createTestApp(mailEnv(), { sameDatabaseAs: keeper });
        const subjects = Array.from({ length: 30 }, (_, index) => `Before shutdown ${index}`);
        // A slow server: A closes while its first mails wait for their answer, and records them before its pool closes.
        smtp.replyDelayMs = 300;
        await commit(a, ...subjects.map((subject) => message(subject)));
        await smtp.waitFor(1);
        await a.close();
        smtp.replyDelayMs = 0;
        const sentByA = smtp.received.length;
        expect(sentByA).toBeGreaterThan(0);
        expect(sentByA).toBeLessThan(30);
        const settled = (await rowsOf(keeper)).filter((row) => row.state === 'succeeded').length;
        expect(settled).toBe(sentByA);

        const b = await createTestApp(mailEnv(), { sameDatabaseAs: keeper });
        try {
          await smtp.waitFor(30, 20_000);
          await eventually(async () => (await rowsOf(keeper)).every((row) => row.state === 'succeeded'), { timeoutMs: 10_000 });
          await new Promise((resolve) => setTimeout(resolve, 600));
          expect(smtp.received.map((mail) => mail.subject).sort()).toEqual([...subjects].sort());
        } finally {
          await b.close();
        }
      } finally {
        await keeper.close();
      }
    });
  });
});

/** In place of the SMTP server, one that answers 421 (busy, closing) to every connection, until `end`. */
async function startBusy(smtp: SmtpTestServer): Promise<{ end(): Promise<void> }> {
  await smtp.stop();
  const server = createServer((socket) => socket.end('421 4.3.2 Too busy, try again later\r\n'));
  await new Promise<void>((resolve) => server.listen(smtp.port, '127.0.0.1', resolve));
  return {
    end: async () => {
      await new Promise((resolve) => server.close(resolve));
      await smtp.start();
    },
  };
}
