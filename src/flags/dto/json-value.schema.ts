import { ApiPropertyOptions } from '@nestjs/swagger';

/** OpenAPI schema of a JsonValue: any JSON value; its shape must match the flag's type. */
export const JSON_VALUE_SCHEMA: ApiPropertyOptions = {
  description: 'Any JSON value; must match `type` (boolean, string, finite number, or any JSON). At most 4 KB serialized and 4 levels deep.',
  nullable: true,
  oneOf: [{ type: 'boolean' }, { type: 'string' }, { type: 'number' }, { type: 'object' }, { type: 'array', items: {} }],
  example: true,
};
