import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { PurgeDto } from './purge.dto';

const errorsOf = (body: object) => validateSync(plainToInstance(PurgeDto, body)).map((error) => Object.values(error.constraints ?? {}).join('; '));

describe('PurgeDto dates', () => {
  it.each(['2025-03-01', '2025-03-01T00:00:00Z', '2025-03-01T00:00:00.123+01:00', '2025-03-01T00:00:00+0100', '2025-03'])(
    'accepts %s, which new Date() reads',
    (value) => {
      expect(errorsOf({ before: value, after: value })).toEqual([]);
      expect(Number.isNaN(new Date(value).getTime())).toBe(false);
    },
  );

  it.each(['2024-W01-1', '2024-W01', '2024-366', '20240101', '20240101T000000Z', '2024-01-01T10.5Z', '2024-01-01T00:00:00+01', 'yesterday', 12])(
    'refuses %j, naming the field',
    (value) => {
      expect(errorsOf({ before: value })).toEqual(['before must be an ISO 8601 date or date-time such as 2026-01-31T00:00:00Z']);
      expect(errorsOf({ after: value })).toEqual(['after must be an ISO 8601 date or date-time such as 2026-01-31T00:00:00Z']);
    },
  );
});
