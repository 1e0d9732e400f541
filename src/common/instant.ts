import { ValidateBy } from 'class-validator';

/** An instant: a date, a time and an offset (`Z` or `±hh:mm`); a local time without one is ambiguous. */
const INSTANT = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(?:Z|[+-](\d{2}):(\d{2}))$/i;

/** An ISO 8601 instant whose fields exist (no 30 February, no 24:00): Date.parse would roll those over. */
export function isInstant(text: unknown): boolean {
  if (typeof text !== 'string') return false;
  const match = INSTANT.exec(text);
  if (!match) return false;
  const [year, month, day, hour, minute, second = '0', offsetHours = '0', offsetMinutes = '0'] = match.slice(1);
  const daysInMonth = new Date(Date.UTC(Number(year), Number(month), 0)).getUTCDate();
  return (
    Number(month) >= 1 &&
    Number(month) <= 12 &&
    Number(day) >= 1 &&
    Number(day) <= daysInMonth &&
    Number(hour) <= 23 &&
    Number(minute) <= 59 &&
    Number(second) <= 59 &&
    Number(offsetHours) <= 23 &&
    Number(offsetMinutes) <= 59 &&
    !Number.isNaN(Date.parse(text))
  );
}

/** The field is such an instant (ISO 8601 text); `message` names the field. */
export const IsInstant = (message: string) => ValidateBy({ name: 'isInstant', validator: { validate: isInstant, defaultMessage: () => message } });
