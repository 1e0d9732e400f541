import { allowanceFor, quotaOf } from './allowance';

describe('allowance', () => {
  it('is 5 without a subscription and 50 with any', () => {
    expect(allowanceFor(false)).toBe(5);
    expect(allowanceFor(true)).toBe(50);
  });

  it('counts the flags beyond the allowance as locked', () => {
    expect(quotaOf(3, false)).toEqual({ max: 5, used: 3, subscribed: false, locked: 0 });
    expect(quotaOf(5, false)).toEqual({ max: 5, used: 5, subscribed: false, locked: 0 });
    expect(quotaOf(12, false)).toEqual({ max: 5, used: 12, subscribed: false, locked: 7 });
    expect(quotaOf(12, true)).toEqual({ max: 50, used: 12, subscribed: true, locked: 0 });
  });
});
