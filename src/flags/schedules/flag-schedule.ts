import type { FlagRuntime, FlagType } from '../flag.model';
import type { FlagRule } from '../targeting/flag-rules';

export const SCHEDULE_STATES = ['pending', 'applied', 'failed'] as const;
export type ScheduleState = (typeof SCHEDULE_STATES)[number];

/** What a schedule changes: any of PATCH's fields, validated by PATCH's rules when the schedule was made. */
export interface ScheduledChange {
  name?: string;
  description?: string | null;
  type?: FlagType;
  value?: unknown;
  runtime?: FlagRuntime;
  archived?: boolean;
  rules?: FlagRule[];
}

/** A change to apply to a flag at `at`, once: `pending`, then `applied`, or `failed` with the reason. */
export interface FlagSchedule {
  id: string;
  organizationId: string;
  flagId: string;
  at: Date;
  change: ScheduledChange;
  state: ScheduleState;
  reason: string | null;
  createdAt: Date;
  settledAt: Date | null;
}

/** How far ahead a change may be scheduled. */
export const MAX_SCHEDULE_AHEAD_MS = 366 * 24 * 60 * 60 * 1000;
/** Pending schedules one flag may have at a time. */
export const MAX_PENDING_SCHEDULES_PER_FLAG = 100;
