import { ApiPropertyOptions } from '@nestjs/swagger';
import { MAX_VALUE_BYTES } from '../flag-value';

/**
 * OpenAPI schema of a JsonValue: any JSON value, `null` included; its shape must match the flag's type.
 * There is deliberately no `type` beside the `oneOf` (a generated client would then refuse `true` or `3`).
 * OpenAPI 3.0 has no null type, so null is allowed by the object branch (`nullable`), the one branch a
 * null can match; every other value matches exactly one branch.
 */
export const JSON_VALUE_SCHEMA: ApiPropertyOptions = {
  description:
    'Any JSON value; must match `type` (boolean, string, finite number, or any JSON, null included). At most 4 KB serialized and 4 levels deep. ' +
    "An object's key order is not significant and not kept (stored and served with its keys sorted, equal as JSON): use an array where order matters.",
  oneOf: [
    { type: 'boolean' },
    { type: 'string' },
    { type: 'number' },
    { type: 'object', additionalProperties: true, nullable: true },
    // The 4 KB limit's longest array: [0,0,…] takes 2 bytes an item.
    { type: 'array', items: {}, maxItems: Math.floor((MAX_VALUE_BYTES - 1) / 2) },
  ],
  example: true,
};
