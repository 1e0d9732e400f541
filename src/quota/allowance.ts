/** Flags an organization may have: 5 without any active subscription, 50 with one (of any kind). */
export const FREE_ALLOWANCE = 5;
export const SUBSCRIBED_ALLOWANCE = 50;

export function allowanceFor(subscribed: boolean): number {
  return subscribed ? SUBSCRIBED_ALLOWANCE : FREE_ALLOWANCE;
}

export interface FlagQuota {
  max: number;
  used: number;
  subscribed: boolean;
  locked: number;
}

export function quotaOf(used: number, subscribed: boolean): FlagQuota {
  const max = allowanceFor(subscribed);
  return { max, used, subscribed, locked: Math.max(0, used - max) };
}
