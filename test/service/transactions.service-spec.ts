import { AuditRepository } from '../../src/audit/audit.repository';
import { Sql, Transaction } from '../../src/database/sql';
import { Transactions } from '../../src/database/transactions';
import { FlagsRepository } from '../../src/flags/flags.repository';
import { OrganizationsRepository } from '../../src/organizations/organizations.repository';
import { createServiceContext, ServiceTestContext } from '../support/service-module';

/** Transactions on a real PostgreSQL: what a run commits, what a failed one leaves (nothing), and its locks. */
describe('Transactions (on a real database)', () => {
  let s: ServiceTestContext;
  let transactions: Transactions;
  let sql: Sql;
  let organizations: OrganizationsRepository;
  let flags: FlagsRepository;
  let audit: AuditRepository;

  beforeAll(async () => {
    s = await createServiceContext();
    transactions = s.get(Transactions);
    sql = s.get(Sql);
    organizations = s.get(OrganizationsRepository);
    flags = s.get(FlagsRepository);
    audit = s.get(AuditRepository);
  });
  afterAll(() => s.close());

  const state = { name: 'x', description: null, type: 'boolean' as const, value: true, runtime: 'shared' as const, archived: false };
  /** An organization, a flag of it and the flag's audit entry: three tables written in one run. */
  const writeThree = async (tx: Transaction, name: string) => {
    const organization = await organizations.createOrganization(tx, name, 0);
    const flag = (await flags.insert(tx, organization.id, { key: 'k', ...state }))!;
    await audit.append(tx, {
      organizationId: organization.id,
      flagId: flag.id,
      flagKey: flag.key,
      actorType: 'system',
      actorId: null,
      action: 'flag.create',
      before: null,
      after: state,
    });
    return organization.id;
  };
  const stored = async (name: string) => {
    const { rows } = await s.db.query(
      `SELECT (SELECT count(*)::int FROM organizations WHERE name = $1) AS organizations,
              (SELECT count(*)::int FROM flags f JOIN organizations o ON o.id = f.organization_id WHERE o.name = $1) AS flags,
              (SELECT count(*)::int FROM flag_audit_entries a JOIN organizations o ON o.id = a.organization_id WHERE o.name = $1) AS entries`,
      [name],
    );
    return rows[0] as { organizations: number; flags: number; entries: number };
  };
  const nothing = { organizations: 0, flags: 0, entries: 0 };
  const everything = { organizations: 1, flags: 1, entries: 1 };

  it('commits every statement of a run together: none is seen elsewhere before the commit, all are after it', async () => {
    let seenDuring: unknown;
    await transactions.run(async (tx) => {
      await writeThree(tx, 'committed');
      seenDuring = await stored('committed');
    });
    expect(seenDuring).toEqual(nothing);
    expect(await stored('committed')).toEqual(everything);
  });

  it.each<[string, (tx: Transaction) => Promise<unknown>]>([
    ['the code throws after its statements', () => Promise.reject(new Error('refused'))],
    ['a later statement fails', (tx) => tx.rows('SELECT 1 / 0')],
  ])('rolls back every statement of a run when %s, and passes the failure on', async (label, fail) => {
    const name = `rolled back: ${label}`;
    await expect(
      transactions.run(async (tx) => {
        await writeThree(tx, name);
        await fail(tx);
      }),
    ).rejects.toThrow(/refused|division by zero/);
    expect(await stored(name)).toEqual(nothing);
  });

  it("keeps concurrent runs apart: one that fails takes none of the other's statements with it", async () => {
    let secondWrote!: () => void;
    const secondHasWritten = new Promise<void>((resolve) => (secondWrote = resolve));
    // Assigned once, after the first run's closure that awaits it is made.
    // eslint-disable-next-line prefer-const
    let second!: Promise<unknown>;
    const first = transactions.run(async (tx) => {
      const organization = await organizations.createOrganization(tx, 'first of two', 0);
      await secondHasWritten;
      await second.catch(() => undefined);
      // The second run has rolled back by now; this one goes on, in its own transaction.
      await flags.insert(tx, organization.id, { key: 'k', ...state });
    });
    second = transactions.run(async (tx) => {
      await writeThree(tx, 'second of two');
      secondWrote();
      throw new Error('second refused');
    });
    await expect(second).rejects.toThrow('second refused');
    await first;
    expect(await stored('first of two')).toEqual({ organizations: 1, flags: 1, entries: 0 });
    expect(await stored('second of two')).toEqual(nothing);
  });

  it('holds a row lock until its run ends: another run waits for it, then takes it', async () => {
    const organizationId = await transactions.run((tx) => writeThree(tx, 'locked'));
    const order: string[] = [];
    let releaseFirst!: () => void;
    const firstHeld = new Promise<void>((resolve) => (releaseFirst = resolve));
    const first = transactions.run(async (tx) => {
      await organizations.lockOrganization(tx, organizationId);
      order.push('first locked');
      await firstHeld;
      order.push('first ends');
    });
    while (order.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    const second = transactions.run(async (tx) => {
      await organizations.lockOrganization(tx, organizationId);
      order.push('second locked');
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(order).toEqual(['first locked']);
    releaseFirst();
    await Promise.all([first, second]);
    expect(order).toEqual(['first locked', 'first ends', 'second locked']);
  });

  it('runs Sql on autocommit: its statement is committed at once, whatever a run beside it does', async () => {
    await expect(
      transactions.run(async (tx) => {
        await organizations.createOrganization(tx, 'inside', 0);
        await organizations.createOrganization(sql, 'outside', 0);
        throw new Error('refused');
      }),
    ).rejects.toThrow('refused');
    expect((await stored('inside')).organizations).toBe(0);
    expect((await stored('outside')).organizations).toBe(1);
  });
});
