/**
 * Flags an organization may have. The spec's two levels, 5 without any active subscription and 50 with one (of any
 * kind), are the defaults; a deployment sets its own (FLAGS_ALLOWED_FREE, FLAGS_ALLOWED_SUBSCRIBED), and the operator
 * may give one organization an allowance of its own, which then applies whatever its subscriptions.
 */
export const FREE_ALLOWANCE = 5;
export const SUBSCRIBED_ALLOWANCE = 50;

export interface AllowanceLevels {
  free: number;
  subscribed: number;
}

export const SPEC_LEVELS: AllowanceLevels = { free: FREE_ALLOWANCE, subscribed: SUBSCRIBED_ALLOWANCE };

/** Where the allowance that applies comes from: a level (by subscription), or the operator's, for this organization. */
export type AllowanceSource = 'free' | 'subscribed' | 'organization';

export interface Allowance {
  max: number;
  source: AllowanceSource;
}

export function allowanceFor(subscribed: boolean, levels: AllowanceLevels = SPEC_LEVELS, own: number | null = null): Allowance {
  if (own !== null) return { max: own, source: 'organization' };
  return subscribed ? { max: levels.subscribed, source: 'subscribed' } : { max: levels.free, source: 'free' };
}

/** The spec's FeatureFlagQuota. */
export interface FlagQuota {
  max: number;
  used: number;
  subscribed: boolean;
  locked: number;
}

export function quotaOf(used: number, subscribed: boolean, allowance: Allowance = allowanceFor(subscribed)): FlagQuota {
  const { max } = allowance;
  return { max, used, subscribed, locked: Math.max(0, used - max) };
}

/** The create 409's message: what the organization may have, and what would give it room. */
export function allowanceReachedMessage(allowance: Allowance): string {
  if (allowance.source === 'organization') {
    return (
      `Flag allowance reached: this organization may have ${allowance.max} flags, an allowance the operator set for it; ` +
      'delete a flag to create another, or ask the operator to raise the allowance'
    );
  }
  return `Flag allowance reached: this organization may have ${allowance.max} flags at its subscription level; subscribe or delete a flag to create another`;
}

/** The locked-403's message: the spec's "subscribe again" under a level, the operator's limit under its own allowance. */
export function lockedMessage(flagKey: string, allowance: Allowance): string {
  if (allowance.source === 'organization') {
    return (
      `Flag "${flagKey}" is beyond the limit the operator set for this organization (${allowance.max} flags): it keeps serving its value, ` +
      'but cannot be edited. Remove another flag to edit it, or ask the operator to raise the allowance'
    );
  }
  return `Flag "${flagKey}" is beyond the plan's limit: it keeps serving its value, but cannot be edited. Subscribe again or remove another flag to edit it`;
}
