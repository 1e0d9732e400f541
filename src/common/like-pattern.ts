/**
 * The LIKE/ILIKE pattern matching `text` anywhere in a value, with `text` taken literally: a search for `50%_off`
 * finds that name only, not every name holding "50" and "off". Backslash is PostgreSQL's default LIKE escape.
 */
export function containsPattern(text: string): string {
  return `%${text.replace(/[\\%_]/g, (character) => `\\${character}`)}%`;
}
