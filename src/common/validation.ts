import { BadRequestException, ValidationError, ValidationPipe } from '@nestjs/common';

/**
 * Nest's pipe answers with an array of messages; the spec wants one string that names the field and the
 * rule. The first broken rule of the first invalid field is reported, with its full path for nested fields.
 */
export function describeValidationErrors(errors: ValidationError[], parentPath = ''): string {
  const [first] = errors;
  if (!first) return 'Validation failed';
  const path = parentPath ? `${parentPath}.${first.property}` : first.property;
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
