import { applyDecorators, Type } from '@nestjs/common';
import { ApiBody, ApiExtraModels, getSchemaPath } from '@nestjs/swagger';

/** One named example of a body: Swagger UI offers them in a list, and generated docs show each. */
export interface BodyExample<T> {
  summary: string;
  value: T;
}

/**
 * A JSON request body of `type` with its examples. `@ApiBody({ type })` cannot carry examples (@nestjs/swagger only
 * moves `examples` into the media type beside a `schema`), so the body is given as a reference to the DTO's schema.
 */
export function ApiJsonBody<T>(
  type: Type<T>,
  examples: Record<string, BodyExample<Partial<T>>>,
  options: { required?: boolean; description?: string } = {},
) {
  return applyDecorators(ApiExtraModels(type), ApiBody({ ...options, schema: { $ref: getSchemaPath(type) }, examples }));
}
