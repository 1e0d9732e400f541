import type { LoggerService } from '@nestjs/common';
import { shutDown, shutdownBudget, ShutdownSteps } from './shutdown';

const never = () => new Promise<void>(() => undefined);

describe('shutdownBudget', () => {
  it('keeps the default drain (the keep-alive period and a second) and leaves the rest for closing', () => {
    expect(shutdownBudget(10_000, 5_000)).toEqual({
      drain: { drainMs: 6_000, fenceMs: 500, graceMs: 8_000 },
      appClosedByMs: 9_000,
      databaseStoppedByMs: 9_900,
    });
  });

  it.each([400, 1_000, 4_000, 10_000, 90_000])('puts every step, in order, inside a grace period of %i ms', (graceMs) => {
    const budget = shutdownBudget(graceMs, 5_000);
    expect(budget.drain.drainMs).toBeLessThan(budget.drain.graceMs);
    expect(budget.drain.graceMs).toBeLessThan(budget.appClosedByMs);
    expect(budget.appClosedByMs).toBeLessThan(budget.databaseStoppedByMs);
    expect(budget.databaseStoppedByMs).toBeLessThan(graceMs);
  });
});

describe('shutDown', () => {
  const logger = () => ({ log: jest.fn(), warn: jest.fn(), error: jest.fn() }) satisfies LoggerService;

  it('runs the steps in order and reports a clean shutdown', async () => {
    const order: string[] = [];
    const steps: ShutdownSteps = {
      drain: async () => void order.push('drain'),
      closeApp: async () => void order.push('app'),
      stopDatabase: async () => void order.push('database'),
    };
    const log = logger();
    expect(await shutDown(steps, shutdownBudget(1_000, 5_000), log)).toBe(true);
    expect(order).toEqual(['drain', 'app', 'database']);
    expect(log.warn).not.toHaveBeenCalled();
  });

  it('stops the database within the grace period when closing the app never ends, naming the step left behind', async () => {
    const graceMs = 800;
    const stopDatabase = jest.fn(async (_timeoutMs: number) => undefined);
    const log = logger();
    const started = Date.now();
    const clean = await shutDown({ drain: async () => undefined, closeApp: never, stopDatabase }, shutdownBudget(graceMs, 5_000), log);
    expect(clean).toBe(false);
    expect(Date.now() - started).toBeLessThan(graceMs);
    // The database gets what is left of the grace period, at least its own part.
    expect(stopDatabase).toHaveBeenCalledWith(expect.any(Number));
    expect(stopDatabase.mock.calls[0][0]).toBeGreaterThanOrEqual(40);
    expect(log.warn).toHaveBeenCalledWith(expect.stringMatching(/^Closing the app did not end within its part of SHUTDOWN_GRACE_SECONDS/));
  });

  it('ends within the grace period when stopping the database never ends either, and goes on after a failed step', async () => {
    const graceMs = 400;
    const log = logger();
    const started = Date.now();
    const steps: ShutdownSteps = {
      drain: async () => undefined,
      closeApp: () => Promise.reject(new Error('pool refused to end')),
      stopDatabase: never,
    };
    expect(await shutDown(steps, shutdownBudget(graceMs, 5_000), log)).toBe(false);
    expect(Date.now() - started).toBeLessThan(graceMs);
    expect(log.warn.mock.calls.map(([message]) => message)).toEqual([
      'Closing the app failed: Error: pool refused to end',
      expect.stringMatching(/^Stopping the database did not end within its part of SHUTDOWN_GRACE_SECONDS/),
    ]);
  });
});
