import { isInstant } from './instant';

describe('isInstant', () => {
  it.each([
    '2026-12-04T18:00:00Z',
    '2026-12-04T18:00Z',
    '2026-12-04T18:00:00.123456789Z',
    '2026-12-04T18:00:00+01:00',
    '2028-02-29T00:00:00-05:30',
    '2026-12-04t18:00:00z',
  ])('takes %s', (text) => expect(isInstant(text)).toBe(true));

  it.each([
    ['no offset', '2026-12-04T18:00:00'],
    ['a date alone', '2026-12-04'],
    ['30 February', '2026-02-30T00:00:00Z'],
    ['29 February of a common year', '2027-02-29T00:00:00Z'],
    ['month 13', '2026-13-01T00:00:00Z'],
    ['24:00', '2026-12-04T24:00:00Z'],
    ['second 60', '2026-12-04T23:59:60Z'],
    ['an offset of 24 hours', '2026-12-04T18:00:00+24:00'],
    ['words', 'next friday'],
    ['a number', 1_764_000_000_000],
  ])('refuses %s', (_what, text) => expect(isInstant(text)).toBe(false));
});
