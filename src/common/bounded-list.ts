import { registerDecorator, ValidationArguments } from 'class-validator';

/** The bounded lists of each DTO class, by property: what `overlongList` checks before anything else runs. */
const boundsOf = new Map<object, Map<string, number>>();

/**
 * A list a caller sends, bounded: at most `maxItems` items (a 400 naming the field, the cap and the length), and
 * with `unique`, no item twice (a 400 naming the field and the item). Checked in one pass with a Set, never by
 * comparing every pair as class-validator's ArrayUnique does (60,000 keys cost it 2 s of CPU, with every other
 * request waiting). Declare the same cap as the OpenAPI `maxItems`. Items are compared as `===` does (lists of
 * strings, numbers, enums). Not an array: left to IsArray.
 *
 * A body field's list over its cap is refused before any item is read, by the length alone (`overlongList`, which
 * the raw input pipe runs before transformation and validation walk the body).
 */
export function BoundedList(maxItems: number, options: { unique?: boolean } = {}) {
  return (target: object, propertyName: string) => {
    const bounds = boundsOf.get(target.constructor) ?? new Map<string, number>();
    boundsOf.set(target.constructor, bounds.set(propertyName, maxItems));
    registerDecorator({
      name: 'boundedList',
      target: target.constructor,
      propertyName,
      constraints: [maxItems],
      validator: {
        validate: (value: unknown) => listError(value, maxItems, options.unique === true, propertyName) === null,
        defaultMessage: (args: ValidationArguments) =>
          listError(args.value, maxItems, options.unique === true, args.property) ?? `${args.property} is not a valid list`,
      },
    });
  };
}

/** Why `value` breaks the bounds, or null. */
export function listError(value: unknown, maxItems: number, unique: boolean, property: string): string | null {
  if (!Array.isArray(value)) return null;
  if (value.length > maxItems) return tooLong(property, maxItems, value.length);
  if (!unique) return null;
  const seen = new Set<unknown>();
  for (const item of value) {
    if (seen.has(item)) return `${property} must not hold ${shown(item)} twice`;
    seen.add(item);
  }
  return null;
}

/**
 * The message for the first field of `body` that is a BoundedList of `dtoClass` (or of a class it extends) and
 * holds more items than its cap, or null: read from the lists' lengths alone.
 */
export function overlongList(body: unknown, dtoClass: object | undefined): string | null {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) return null;
  for (let type = dtoClass; type && type !== Function.prototype; type = Object.getPrototypeOf(type) as object | undefined) {
    for (const [property, maxItems] of boundsOf.get(type) ?? []) {
      if (!Object.hasOwn(body, property)) continue;
      const value = (body as Record<string, unknown>)[property];
      if (Array.isArray(value) && value.length > maxItems) return tooLong(property, maxItems, value.length);
    }
  }
  return null;
}

function tooLong(property: string, maxItems: number, length: number): string {
  return `${property} must hold at most ${maxItems} items (got ${length})`;
}

/** An item as a message names it: as JSON, cut short when long. */
function shown(item: unknown): string {
  const text = JSON.stringify(item) ?? String(item);
  return text.length > 80 ? `${text.slice(0, 79)}…` : text;
}
