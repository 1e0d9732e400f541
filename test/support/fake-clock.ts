import type { Clock } from '../../src/common/clock';

/** A clock that moves only when told: schedules fall due when a test says so, not after real minutes. */
export class FakeClock implements Clock {
  constructor(private time: number = Date.now()) {}

  now(): Date {
    return new Date(this.time);
  }

  advance(ms: number): void {
    this.time += ms;
  }

  set(instant: Date): void {
    this.time = instant.getTime();
  }
}
