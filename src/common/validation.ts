import { BadRequestException, ValidationError, ValidationPipe } from '@nestjs/common';
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
  return new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    exceptionFactory: (errors) => new BadRequestException(describeValidationErrors(errors)),
  });
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
