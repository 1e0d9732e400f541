import { AsyncLocalStorage } from 'node:async_hooks';
import type { DataSource, EntityManager } from 'typeorm';
import { anyContextPropagates, copiesIntoResources } from '../../test/support/async-context';
import { Sql, Transaction } from './sql';
import { Transactions } from './transactions';

/**
 * A data source as TypeORM's behaves for what Transactions uses: `transaction` runs the work on a manager of its
 * own connection between BEGIN and COMMIT (ROLLBACK when the work rejects); `manager` is the pool. Every
 * statement is logged with the connection it reached.
 */
function recordingDataSource() {
  const log: string[] = [];
  let opened = 0;
  const managerOf = (connection: string) =>
    ({
      query: async (sql: string) => {
        log.push(`${connection}: ${sql}`);
        if (sql.includes('FAIL')) throw new Error(`failed: ${sql}`);
        return [];
      },
    }) as unknown as EntityManager;
  const dataSource = {
    manager: managerOf('pool'),
    transaction: async <T>(work: (manager: EntityManager) => Promise<T>): Promise<T> => {
      opened += 1;
      const connection = `tx${opened}`;
      log.push(`${connection}: BEGIN`);
      try {
        const result = await work(managerOf(connection));
        log.push(`${connection}: COMMIT`);
        return result;
      } catch (error) {
        log.push(`${connection}: ROLLBACK`);
        throw error;
      }
    },
  } as unknown as DataSource;
  return { log, transactions: new Transactions(dataSource), sql: new Sql(dataSource) };
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe('Transactions', () => {
  it('hands the work a transaction on a connection of its own, commits what it did, and answers its result', async () => {
    const { log, transactions } = recordingDataSource();
    const result = await transactions.run(async (tx) => {
      await tx.rows('INSERT a');
      await tx.row('UPDATE b');
      return 'done';
    });
    expect(result).toBe('done');
    expect(log).toEqual(['tx1: BEGIN', 'tx1: INSERT a', 'tx1: UPDATE b', 'tx1: COMMIT']);
  });

  it('keeps concurrent runs apart, a run that outlives another included', async () => {
    const { log, transactions } = recordingDataSource();
    let releaseFirst!: () => void;
    const firstHeld = new Promise<void>((resolve) => (releaseFirst = resolve));
    const first = transactions.run(async (tx) => {
      await tx.rows('INSERT first');
      await firstHeld;
      // The second run has committed by now: this statement still goes to the first one's transaction.
      await tx.rows('UPDATE first');
    });
    const second = transactions.run(async (tx) => {
      await tick();
      await tx.rows('INSERT second');
    });
    await second;
    releaseFirst();
    await first;
    expect(log.filter((line) => line.startsWith('tx1:'))).toEqual(['tx1: BEGIN', 'tx1: INSERT first', 'tx1: UPDATE first', 'tx1: COMMIT']);
    expect(log.filter((line) => line.startsWith('tx2:'))).toEqual(['tx2: BEGIN', 'tx2: INSERT second', 'tx2: COMMIT']);
    expect(log.indexOf('tx2: COMMIT')).toBeLessThan(log.indexOf('tx1: UPDATE first'));
  });

  it.each<[string, (tx: Transaction) => Promise<unknown>, string, string[]]>([
    [
      'the work throws',
      async (tx) => {
        await tx.rows('INSERT a');
        throw new Error('refused');
      },
      'refused',
      ['tx1: BEGIN', 'tx1: INSERT a', 'tx1: ROLLBACK'],
    ],
    [
      'a statement fails',
      async (tx) => {
        await tx.rows('INSERT a');
        await tx.rows('INSERT FAIL');
        await tx.rows('never sent');
      },
      'failed: INSERT FAIL',
      ['tx1: BEGIN', 'tx1: INSERT a', 'tx1: INSERT FAIL', 'tx1: ROLLBACK'],
    ],
  ])('rolls back a run in which %s, and passes the failure on', async (_label, work, failure, statements) => {
    const { log, transactions } = recordingDataSource();
    await expect(transactions.run(work)).rejects.toThrow(failure);
    expect(log).toEqual(statements);
  });

  it('refuses a statement on a transaction whose run has ended, committed or rolled back', async () => {
    const { log, transactions } = recordingDataSource();
    let committed!: Transaction;
    await transactions.run(async (tx) => {
      committed = tx;
    });
    let rolledBack!: Transaction;
    await transactions
      .run(async (tx) => {
        rolledBack = tx;
        throw new Error('refused');
      })
      .catch(() => undefined);
    const logged = log.length;
    await expect(committed.rows('UPDATE late')).rejects.toThrow('transaction whose run had already ended');
    await expect(rolledBack.row('UPDATE late')).rejects.toThrow('transaction whose run had already ended');
    expect(log).toHaveLength(logged);
  });

  it('leaves Sql outside every transaction: each statement on the pool, autocommitted', async () => {
    const { log, transactions, sql } = recordingDataSource();
    await transactions.run(async (tx) => {
      await tx.rows('INSERT in');
      await sql.rows('SELECT out');
    });
    expect(log).toEqual(['tx1: BEGIN', 'tx1: INSERT in', 'pool: SELECT out', 'tx1: COMMIT']);
  });

  describe('carries no async context', () => {
    afterEach(() => jest.restoreAllMocks());

    it('the check below sees a storage that is on (where storages copy into resources: Node 20 and 22), and not one that is off', () => {
      const storage = new AsyncLocalStorage<string>();
      storage.enterWith('on');
      expect(anyContextPropagates()).toBe(copiesIntoResources(storage));
      storage.disable();
      expect(anyContextPropagates()).toBe(false);
    });

    it('runs, concurrent or failing, enter no AsyncLocalStorage, and promises and timers made after them carry none', async () => {
      const entered = [jest.spyOn(AsyncLocalStorage.prototype, 'run'), jest.spyOn(AsyncLocalStorage.prototype, 'enterWith')];
      const { transactions } = recordingDataSource();
      await Promise.allSettled([
        transactions.run(async (tx) => tx.rows('INSERT a')),
        transactions.run(async (tx) => {
          await tick();
          await tx.rows('INSERT FAIL');
        }),
        transactions.run(async () => tick()),
      ]);
      for (const spy of entered) expect(spy).not.toHaveBeenCalled();
      expect(anyContextPropagates()).toBe(false);
    });
  });
});
