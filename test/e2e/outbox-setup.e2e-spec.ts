import { DataSource } from 'typeorm';
import { Outbox1796300000000 } from '../../migrations/1796300000000-Outbox';
import { Webhooks1797100000000 } from '../../migrations/1797100000000-Webhooks';
import { dataSourceOptions, runMigrations } from '../../src/database/data-source-options';
import { Transactions } from '../../src/database/transactions';
import { Mailer } from '../../src/mail/mailer';
import { eventually } from '../support/eventually';
import { LogCapture } from '../support/log-capture';
import { startSmtpServer } from '../support/servers/smtp-server';
import { createTestApp } from '../support/test-app';
import { createTestDatabase, TEST_SERVICE_ROLE } from '../support/test-database';

/**
 * The outbox's table and mail's switch: the migration on a database from before it, and a deployment without
 * SMTP_URL. (Apart from mail.e2e-spec.ts: Nest's log lines go to the first app a test file makes, and the boot line
 * checked here must be that app's.)
 */
describe('the outbox table and mail switched off', () => {
  it('is off without SMTP_URL: Mailer.enabled is false, the boot log says so once, and send refuses', async () => {
    const log = new LogCapture();
    const t = await createTestApp({ LOG_LEVEL: 'info' }, { logDestination: log });
    try {
      const mailer = t.app.get(Mailer);
      expect(mailer.enabled).toBe(false);
      // Nest's route lines ("Mapped {/v1/auth/verify-email, POST}") name mail routes, not mail's state.
      expect(log.lines.filter((line) => line.context !== 'RouterExplorer' && /mail/i.test(line.msg))).toEqual([
        expect.objectContaining({
          context: 'Mail',
          msg: 'SMTP_URL is not set: mail is off (invitations answer with their link, for the inviter to pass on)',
        }),
      ]);
      await expect(
        t.app.get(Transactions).run((tx) => mailer.send(tx, { to: 'frank@a.example', subject: 'Nobody hears', text: 'Hello' })),
      ).rejects.toThrow(/^Mail is off/);
      expect((await t.db.query('SELECT count(*)::int AS n FROM outbox')).rows[0].n).toBe(0);
    } finally {
      await t.close();
    }
  });

  it('migrates a database from before the outbox, keeping its rows, and the service role then sends mail through it', async () => {
    const database = await createTestDatabase();
    const smtp = await startSmtpServer();
    try {
      // The database as it was before the migration, with rows of its own.
      const owner = new DataSource({ ...dataSourceOptions(database.ownerUrl), extra: { max: 1 } });
      await owner.initialize();
      try {
        const runner = owner.createQueryRunner();
        // The webhooks' migration builds on the outbox's: undone first, as a database from before both.
        await new Webhooks1797100000000().down(runner);
        await new Outbox1796300000000().down(runner);
        await runner.release();
        await owner.query(`DELETE FROM migrations WHERE name IN ('Outbox1796300000000', 'Webhooks1797100000000')`);
        await owner.query(`INSERT INTO organizations (name, storage_allocation) VALUES ('Studio from before', 1024)`);
        expect((await owner.query(`SELECT to_regclass('outbox') IS NULL AS missing`))[0].missing).toBe(true);
      } finally {
        await owner.destroy();
      }

      expect(await runMigrations(database.ownerUrl, { grantTo: TEST_SERVICE_ROLE })).toEqual(['Outbox1796300000000', 'Webhooks1797100000000']);

      // The app connects as the service role, which was granted the new table with the others.
      const t = await createTestApp({ SMTP_URL: smtp.url, MAIL_FROM: 'flags@studio.example' }, { databaseUrl: database.url });
      try {
        expect((await t.db.query(`SELECT name, storage_allocation::int AS allocation FROM organizations`)).rows).toEqual([
          { name: 'Studio from before', allocation: 1024 },
        ]);
        const id = await t.app
          .get(Transactions)
          .run((tx) => t.app.get(Mailer).send(tx, { to: 'frank@a.example', subject: 'After the migration', text: 'Hello' }));
        const [mail] = await smtp.waitFor(1);
        expect(mail.subject).toBe('After the migration');
        await eventually(async () => (await t.db.query('SELECT state FROM outbox WHERE id = $1', [id])).rows[0].state === 'succeeded');
      } finally {
        await t.close();
      }
    } finally {
      await smtp.close();
      await database.drop();
    }
  });
});
