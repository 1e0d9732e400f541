import type { OpenAPIObject } from '@nestjs/swagger';
import { errorShapeOf } from './error-response';
import { JSON_BODY_LIMIT } from './json-body';
import { refusesUnknownQueryParameters, UNKNOWN_QUERY_EXTENSION } from './query-parameters';
import type { SurfaceMap } from './surfaces';

type Responses = Record<string, { description: string; content?: Record<string, { schema: object }> }>;
type Operation = { responses: Responses; [UNKNOWN_QUERY_EXTENSION]?: string };

const UNKNOWN_QUERY = 'a query parameter this operation does not take (the message names it)';

const ERROR_SCHEMAS = { api: 'ApiErrorDto', storage: 'StorageErrorDto', ofrep: 'OfrepErrorDto' } as const;

/** Methods whose bodies jsonBody() parses (it leaves GET, HEAD and OPTIONS bodies unread). */
const BODY_METHODS = new Set(['post', 'put', 'patch', 'delete']);

/**
 * Adds the answers that do not come from any one controller to every operation they can reach:
 * - the body parser's, raised before routing on a method that carries a body (malformed JSON, too large,
 *   not JSON), everywhere but the upload host, whose bodies are file bytes;
 * - 408 on a method that carries a body, when the body stalls (src/http/http-timeouts.ts);
 * - 400 for an unknown query parameter on the API and admin API (src/http/query-parameters.ts), but on an
 *   operation that ignores them; added to the description of a 400 the operation documents itself;
 * - 503 when the database is unreachable, and 500 for a fault no input can cause (logged with X-Request-Id).
 * Each is documented with the error body its path answers in (the storage shape under the storage paths).
 * A status an operation already documents keeps its own description.
 */
export function addCommonResponses(document: OpenAPIObject, surfaces: SurfaceMap): OpenAPIObject {
  for (const [path, item] of Object.entries(document.paths)) {
    const surface = surfaces.of(path);
    const shape = errorShapeOf(surface);
    const schema = { $ref: `#/components/schemas/${ERROR_SCHEMAS[shape]}` };
    const error = (description: string) => ({ description, content: { 'application/json': { schema } } });
    const isUpload = surface === 'upload';
    for (const [method, operation] of Object.entries(item as Record<string, Operation>)) {
      if (!operation?.responses) continue;
      const add = (status: number, description: string) => {
        operation.responses[String(status)] ??= error(description);
      };
      const refusesQuery = refusesUnknownQueryParameters(surface) && operation[UNKNOWN_QUERY_EXTENSION] !== 'ignored';
      if (refusesQuery && operation.responses['400']) operation.responses['400'].description += `; or ${UNKNOWN_QUERY}`;
      if (BODY_METHODS.has(method) && !isUpload) {
        add(400, `The request body is not valid JSON, or a field is invalid${refusesQuery ? `, or ${UNKNOWN_QUERY}` : ' (the message names it)'}`);
        add(413, `The request body is larger than ${JSON_BODY_LIMIT}`);
        add(415, 'The request has a body that is not JSON: send Content-Type: application/json');
      }
      if (BODY_METHODS.has(method)) {
        add(
          408,
          isUpload
            ? 'REQUEST_TIMEOUT: no byte of the body arrived for UPLOAD_IDLE_TIMEOUT_SECONDS; nothing was stored and the URL can be used again'
            : 'REQUEST_TIMEOUT: the request body did not arrive within HTTP_REQUEST_TIMEOUT_SECONDS; nothing was changed',
        );
      }
      if (refusesQuery) add(400, `VALIDATION_ERROR: ${UNKNOWN_QUERY}`);
      add(500, 'An unexpected fault (never an answer to bad input); logged with the X-Request-Id');
      add(503, 'A backing service (the database) is unreachable; retry shortly');
    }
  }
  return document;
}
