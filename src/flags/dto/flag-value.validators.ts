import { registerDecorator, ValidationArguments, ValidationOptions } from 'class-validator';
import { flagValueError } from '../flag-value';

/** The value matches the sibling `type` field. */
export function IsFlagValue(options?: ValidationOptions) {
  return (target: object, propertyName: string) =>
    registerDecorator({
      name: 'isFlagValue',
      target: target.constructor,
      propertyName,
      options,
      validator: {
        validate: (value: unknown, args: ValidationArguments) => flagValueError((args.object as { type?: unknown }).type, value) === null,
        defaultMessage: (args: ValidationArguments) => flagValueError((args.object as { type?: unknown }).type, args.value) ?? 'value is invalid',
      },
    });
}

/** On update, `type` and `value` come together or not at all. */
export function SentWith(sibling: string, options?: ValidationOptions) {
  return (target: object, propertyName: string) =>
    registerDecorator({
      name: 'sentWith',
      target: target.constructor,
      propertyName,
      constraints: [sibling],
      options: { message: 'type and value must be sent together', ...options },
      validator: {
        validate: (value: unknown, args: ValidationArguments) =>
          value !== undefined && (args.object as Record<string, unknown>)[sibling] !== undefined,
      },
    });
}

/** A field that may never be sent (the flag key is immutable). */
export function Immutable(message: string) {
  return (target: object, propertyName: string) =>
    registerDecorator({
      name: 'immutable',
      target: target.constructor,
      propertyName,
      options: { message },
      validator: { validate: (value: unknown) => value === undefined },
    });
}
