import { systemClock } from './clock';

describe('systemClock', () => {
  it('reads the time as Date.now() does', () => {
    const before = Date.now();
    const now = systemClock.now();
    expect(now).toBeGreaterThanOrEqual(before);
    expect(now).toBeLessThanOrEqual(Date.now());
  });

  it('runs a job every interval until it is stopped', () => {
    jest.useFakeTimers();
    try {
      const job = jest.fn();
      const timer = systemClock.every(250, job);
      jest.advanceTimersByTime(1_000);
      expect(job).toHaveBeenCalledTimes(4);
      timer.stop();
      jest.advanceTimersByTime(1_000);
      expect(job).toHaveBeenCalledTimes(4);
    } finally {
      jest.useRealTimers();
    }
  });
});
