import { ArgumentMetadata, BadRequestException, ValidationError, ValidationPipe } from '@nestjs/common';
import { Transform } from 'class-transformer';
import { registerDecorator, ValidationOptions } from 'class-validator';

/**
 * Nest's pipe answers with an array of messages; the spec wants one string that names the field and the
 * rule. The first broken rule of the first invalid field is reported, with its full path for nested fields.
 */
export function describeValidationErrors(errors: ValidationError[], parentPath = ''): string {
  const [first] = errors;
  if (!first) return 'Validation failed';
  const path = parentPath ? `${parentPath}.${first.property}` : first.property;
  // forbidNonWhitelisted's message names the property alone; name it by its whole path.
  if (first.constraints?.whitelistValidation) return `property ${path} should not exist`;
  const constraints = Object.values(first.constraints ?? {});
  if (constraints.length > 0) {
    // Decorators run bottom-up, so the last failure is the top-most rule as written (the basic type check
    // before length or pattern). class-validator starts its messages with the property name; qualify it
    // for nested fields.
    const message = constraints[constraints.length - 1];
    return parentPath && message.startsWith(first.property) ? `${parentPath}.${message}` : message;
  }
  return describeValidationErrors(first.children ?? [], path);
}

export function createValidationPipe(): ValidationPipe {
  return new ExactInputValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    exceptionFactory: (errors) => new BadRequestException(describeValidationErrors(errors)),
  });
}

/**
 * Keys that class-transformer never copies onto what it builds (it skips them). It also reads an object's
 * `constructor` to guess its class, so an own `constructor` key (`{"constructor": 1}`) makes it call 1 as a
 * class: it must never see one.
 */
const UNCOPIED_KEYS = new Set(['__proto__', 'constructor']);

/** The copies handed to class-transformer (see shieldedCopy), each to the input it was copied from. */
const sentOf = new WeakMap<object, object>();

/**
 * A field whose value is the client's JSON, kept exactly as sent, every key included (a flag value): what
 * class-transformer made of it is replaced by the value from the request itself.
 */
export const KeepJsonAsSent = () =>
  Transform(({ obj, key }) => (sentOf.get(obj as object) ?? (obj as Record<string, unknown>))[key as keyof object], { toClassOnly: true });

/**
 * Nest's pipe deletes every `__proto__`, `constructor` and `prototype` key of the input, at any depth and in
 * place, before class-transformer runs: a json flag's value lost them silently (`{"__proto__": {...}}` was
 * stored as `{}`). Here the input is left as it came, and class-transformer gets a copy without the keys it
 * cannot take (shieldedCopy). Then:
 * - a field that keeps the client's JSON (KeepJsonAsSent) takes it from the input, every key included;
 * - where class-transformer builds a DTO or copies an object, a key it does not copy is refused with 400
 *   naming it, as any unknown field is (`prototype`, which it does copy, is refused by the whitelist).
 */
class ExactInputValidationPipe extends ValidationPipe {
  protected override stripProtoKeys(): void {}

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    // What is not validated (a primitive, an `unknown` body) is not handed to class-transformer either.
    if (!metadata.metatype || !this.toValidate(metadata)) return super.transform(value, metadata);
    const built: unknown = await super.transform(shieldedCopy(value), metadata);
    const dropped = droppedKey(value, built);
    if (dropped !== null) throw new BadRequestException(`property ${dropped} should not exist`);
    return built;
  }
}

/** `value` without `__proto__` and `constructor` keys, at any depth; each object copied is mapped to its original. */
function shieldedCopy(value: unknown): unknown {
  if (!isObject(value) || !isPlainData(value)) return value;
  const copy = Array.isArray(value)
    ? value.map(shieldedCopy)
    : Object.fromEntries(
        Object.keys(value)
          .filter((key) => !UNCOPIED_KEYS.has(key))
          .map((key) => [key, shieldedCopy((value as Record<string, unknown>)[key])]),
      );
  sentOf.set(copy, value);
  return copy;
}

/** The path of the first `__proto__` or `constructor` key of `sent` that `built` (made from it) lacks. */
function droppedKey(sent: unknown, built: unknown, path = ''): string | null {
  if (sent === built || !isObject(sent) || !isObject(built)) return null;
  for (const key of Object.keys(sent)) {
    const childPath = Array.isArray(sent) ? `${path}[${key}]` : path ? `${path}.${key}` : key;
    if (!Object.hasOwn(built, key)) {
      if (UNCOPIED_KEYS.has(key)) return childPath;
      continue;
    }
    const found = droppedKey((sent as Record<string, unknown>)[key], (built as Record<string, unknown>)[key], childPath);
    if (found !== null) return found;
  }
  return null;
}

function isObject(value: unknown): value is object {
  return value !== null && typeof value === 'object';
}

/** What JSON or a query string makes: arrays and plain objects (a query's have no prototype). */
function isPlainData(value: object): boolean {
  const prototype: unknown = Object.getPrototypeOf(value);
  return Array.isArray(value) || prototype === Object.prototype || prototype === null;
}

/**
 * A length rule that counts characters as PostgreSQL's varchar(n) does (code points). class-validator's
 * Length skips variation selectors (U+FE0E, U+FE0F), so "a\uFE0F" x 100 would pass Length(1, 100) and then
 * overflow a varchar(100).
 */
export function CharLength(min: number, max: number, options?: ValidationOptions) {
  return (target: object, propertyName: string) =>
    registerDecorator({
      name: 'charLength',
      target: target.constructor,
      propertyName,
      constraints: [min, max],
      options: {
        message:
          min > 0 ? `${propertyName} must be between ${min} and ${max} characters long` : `${propertyName} must be at most ${max} characters long`,
        ...options,
      },
      validator: {
        validate: (value: unknown) => {
          if (typeof value !== 'string') return false;
          const length = [...value].length;
          return length >= min && length <= max;
        },
      },
    });
}

/** class-transformer's `@Transform` for a text field compared as typed without its surrounding spaces (an email). */
export const trimmedString = ({ value }: { value: unknown }): unknown => (typeof value === 'string' ? value.trim() : value);
