import { Sql } from '../database/sql';
import { FakeClock } from '../../test/support/fake-clock';
import { ChangeFeed, FeedRead } from './change-feed';
import { InvalidationBus } from './invalidation-bus';

/** A database that answers the feed's statement with the snapshot bounds and rows the test sets. */
function setup() {
  const statements: Array<{ since: string; full: boolean }> = [];
  const answer = { xmin: '100', xmax: '105', rows: [] as unknown[], fail: null as Error | null };
  let release: () => void = () => undefined;
  let gate: Promise<void> | null = null;
  const sql = {
    row: async (_text: string, [since, full]: [string, boolean]) => {
      statements.push({ since, full });
      if (gate) await gate;
      if (answer.fail) throw answer.fail;
      return { xmin: answer.xmin, xmax: answer.xmax, s0: answer.rows };
    },
  } as unknown as Sql;
  let reset: () => void = () => undefined;
  const bus = { onReset: (handler: () => void) => (reset = handler) } as unknown as InvalidationBus;
  const clock = new FakeClock();
  const feed = new ChangeFeed(sql, bus, clock);
  const applied: Array<{ rows: unknown[]; read: FeedRead }> = [];
  feed.register({ sql: 'SELECT 1', apply: (rows, read) => applied.push({ rows, read }) });
  return {
    feed,
    clock,
    statements,
    answer,
    applied,
    reset: () => reset(),
    /** Holds the next statements until `open()`. */
    hold: () => {
      gate = new Promise((resolve) => (release = resolve));
    },
    open: () => {
      gate = null;
      release();
    },
  };
}

describe('ChangeFeed', () => {
  afterEach(() => jest.useRealTimers());

  it('reads everything first, then what changed since the xmin of the last read, every PERIOD_MS of the clock', async () => {
    const { feed, clock, statements, answer, applied } = setup();
    await feed.onApplicationBootstrap();
    expect(statements).toEqual([{ since: '0', full: true }]);
    expect(clock.intervals).toEqual([ChangeFeed.PERIOD_MS]);
    expect(ChangeFeed.PERIOD_MS).toBeLessThanOrEqual(5_000);
    answer.xmin = '103';
    answer.rows = [{ id: 'a' }];
    await feed.tick();
    expect(statements[1]).toEqual({ since: '100', full: false });
    await feed.tick();
    expect(statements[2]).toEqual({ since: '103', full: false });
    expect(applied.map(({ read }) => read.full)).toEqual([true, false, false]);
    expect(applied[1].rows).toEqual([{ id: 'a' }]);
  });

  it('starts over with a full read when the database went back in time', async () => {
    const { feed, statements, answer, applied } = setup();
    answer.xmin = '5000';
    answer.xmax = '5001';
    await feed.tick();
    answer.xmin = '40';
    answer.xmax = '42'; // a restored cluster: its next transaction id is below what was read past
    await feed.tick();
    expect(statements.slice(1)).toEqual([
      { since: '5000', full: false },
      { since: '0', full: true },
    ]);
    expect(applied.map(({ read }) => read.full)).toEqual([true, true]);
    await feed.tick();
    expect(statements[3]).toEqual({ since: '40', full: false });
  });

  it('keeps its place when a read fails, and resumes from it', async () => {
    const { feed, statements, answer, applied } = setup();
    await feed.tick();
    answer.fail = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    await expect(feed.tick()).rejects.toThrow('ECONNREFUSED');
    answer.fail = null;
    await feed.tick();
    expect(statements.map(({ since }) => since)).toEqual(['0', '100', '100']);
    expect(applied).toHaveLength(2);
  });

  it('shares one catch-up among every caller waiting, starts it after the read in flight, and spaces catch-ups a second apart', async () => {
    jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick'] });
    const { feed, statements, hold, open } = setup();
    await feed.tick(); // a read at t=0
    hold();
    const first = feed.catchUp();
    const others = [feed.catchUp(), feed.catchUp()];
    await jest.advanceTimersByTimeAsync(ChangeFeed.CATCH_UP_SPACING_MS - 1);
    expect(statements).toHaveLength(1); // not a second after the last read yet
    await jest.advanceTimersByTimeAsync(1);
    expect(statements).toHaveLength(2); // one read for the three callers, in flight
    const next = feed.catchUp(); // arrived while it was in flight: it may not have seen what this caller needs
    open();
    await Promise.all([first, ...others]);
    expect(statements).toHaveLength(2);
    await jest.advanceTimersByTimeAsync(ChangeFeed.CATCH_UP_SPACING_MS);
    await next;
    expect(statements).toHaveLength(3);
  });

  it('catches up when the bus says it may have lost messages', async () => {
    jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick'] });
    const { feed, statements, reset } = setup();
    await feed.tick();
    reset();
    await jest.advanceTimersByTimeAsync(ChangeFeed.CATCH_UP_SPACING_MS);
    expect(statements).toHaveLength(2);
  });

  it('ends a catch-up waiting for its turn at shutdown, without reading', async () => {
    jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick'] });
    const { feed, statements } = setup();
    await feed.tick();
    const waiting = feed.catchUp();
    await jest.advanceTimersByTimeAsync(1);
    await feed.beforeApplicationShutdown(); // no timer moved: it did not wait out the spacing
    await waiting;
    expect(statements).toHaveLength(1);
  });

  it('does nothing without sources (the CLI)', async () => {
    const sql = { row: jest.fn() } as unknown as Sql;
    const feed = new ChangeFeed(sql, { onReset: () => undefined } as unknown as InvalidationBus, new FakeClock());
    await feed.onApplicationBootstrap();
    expect(sql.row).not.toHaveBeenCalled();
  });
});
