import { allowanceFor, allowanceReachedMessage, lockedMessage, quotaOf } from './allowance';

describe('allowance', () => {
  it('is 5 without a subscription and 50 with any, by default', () => {
    expect(allowanceFor(false)).toEqual({ max: 5, source: 'free' });
    expect(allowanceFor(true)).toEqual({ max: 50, source: 'subscribed' });
  });

  it("takes the deployment's levels, and an organization's own allowance over either", () => {
    const levels = { free: 100, subscribed: 2_000 };
    expect(allowanceFor(false, levels)).toEqual({ max: 100, source: 'free' });
    expect(allowanceFor(true, levels)).toEqual({ max: 2_000, source: 'subscribed' });
    expect(allowanceFor(true, levels, 3)).toEqual({ max: 3, source: 'organization' });
    expect(allowanceFor(false, levels, 10_000)).toEqual({ max: 10_000, source: 'organization' });
  });

  it('counts the flags beyond the allowance as locked', () => {
    expect(quotaOf(3, false)).toEqual({ max: 5, used: 3, subscribed: false, locked: 0 });
    expect(quotaOf(5, false)).toEqual({ max: 5, used: 5, subscribed: false, locked: 0 });
    expect(quotaOf(12, false)).toEqual({ max: 5, used: 12, subscribed: false, locked: 7 });
    expect(quotaOf(12, true)).toEqual({ max: 50, used: 12, subscribed: true, locked: 0 });
    expect(quotaOf(12, true, { max: 4, source: 'organization' })).toEqual({ max: 4, used: 12, subscribed: true, locked: 8 });
  });

  it("keeps the spec's messages under a level, and names the operator's allowance under the organization's own", () => {
    expect(allowanceReachedMessage({ max: 5, source: 'free' })).toBe(
      'Flag allowance reached: this organization may have 5 flags at its subscription level; subscribe or delete a flag to create another',
    );
    expect(lockedMessage('k', { max: 5, source: 'free' })).toBe(
      `Flag "k" is beyond the plan's limit: it keeps serving its value, but cannot be edited. Subscribe again or remove another flag to edit it`,
    );
    const own = { max: 3, source: 'organization' } as const;
    expect(allowanceReachedMessage(own)).toMatch(/^Flag allowance reached: this organization may have 3 flags, an allowance the operator set/);
    expect(lockedMessage('k', own)).toMatch(/^Flag "k" is beyond the limit the operator set for this organization \(3 flags\)/);
    expect(lockedMessage('k', own)).not.toMatch(/subscribe/i);
    expect(allowanceReachedMessage(own)).not.toMatch(/subscribe/i);
  });
});
