/** What time it is, for behaviour that depends on it (schedules): tests provide their own under CLOCK. */
export interface Clock {
  now(): Date;
}

export const CLOCK = Symbol('CLOCK');

export const systemClock: Clock = { now: () => new Date() };
