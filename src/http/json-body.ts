import { BadRequestException, HttpException, PayloadTooLargeException, UnsupportedMediaTypeException } from '@nestjs/common';
import { json, NextFunction, Request, Response } from 'express';

export const JSON_BODY_LIMIT = '256kb';
const JSON_BODY_LIMIT_BYTES = 256 * 1024;

/** A route that takes larger JSON bodies than JSON_BODY_LIMIT (a flag import: 50 flags with 4 KB values and rules). */
export interface LargeJsonRoute {
  method: string;
  /** The path as the router sees it, without the query. */
  path: string;
  limitBytes: number;
}

/** A body on these means nothing in HTTP; it is left unread rather than parsed into errors no route documents. */
const BODYLESS_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * Parses JSON request bodies, except on the upload host whose bodies are file bytes streamed to the store.
 * A body that is not JSON is refused (415) rather than ignored: an ignored body reads as "no fields", which
 * for a purge means "every file".
 */
export function jsonBody(isRawBodyPath: (path: string) => boolean, largeRoutes: readonly LargeJsonRoute[] = []) {
  const parsers = new Map<number, ReturnType<typeof json>>([[JSON_BODY_LIMIT_BYTES, json({ limit: JSON_BODY_LIMIT_BYTES })]]);
  for (const route of largeRoutes) parsers.set(route.limitBytes, json({ limit: route.limitBytes }));
  return (request: Request, response: Response, next: NextFunction): void => {
    if (BODYLESS_METHODS.has(request.method) || isRawBodyPath(request.path)) return next();
    const limitBytes = limitOf(request, largeRoutes);
    const parse = parsers.get(limitBytes)!;
    // body-parser sees a declared length over the limit at once too, but reads the whole body before it
    // answers (up to HTTP_REQUEST_TIMEOUT_SECONDS of a 1 GB upload nobody wants): answered now, and the
    // connection closed after the answer rather than kept to drain the rest. Once answered, Node no longer ties
    // the request to its connection, so the request is ended here (as a 408 ends it: http-timeouts.ts), and
    // nothing (the request timeout included) waits for the rest of its body.
    if (declaredLength(request) > limitBytes) {
      response.setHeader('Connection', 'close');
      response.once('finish', () => request.destroy());
      return next(tooLarge(limitBytes));
    }
    parse(request, response, (error?: unknown) => {
      if (error) return next(bodyError(error, limitBytes));
      if (request.body === undefined && hasBody(request)) {
        return next(new UnsupportedMediaTypeException('Request bodies must be JSON: send Content-Type: application/json'));
      }
      next();
    });
  };
}

/** The body's declared length in bytes, 0 when none is declared (a chunked body is limited as it streams). */
function declaredLength(request: Request): number {
  const length = request.headers['content-length'];
  return length !== undefined && /^\d+$/.test(length) ? Number(length) : 0;
}

function limitOf(request: Request, largeRoutes: readonly LargeJsonRoute[]): number {
  const path = request.path.toLowerCase();
  return largeRoutes.find((route) => route.method === request.method && route.path === path)?.limitBytes ?? JSON_BODY_LIMIT_BYTES;
}

function tooLarge(limitBytes: number): HttpException {
  const limit = limitBytes === JSON_BODY_LIMIT_BYTES ? JSON_BODY_LIMIT : `${limitBytes / 1024 / 1024}mb`;
  return new PayloadTooLargeException(`Request body must be at most ${limit}`);
}

function hasBody(request: Request): boolean {
  const length = request.headers['content-length'];
  return request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/** body-parser's errors, as the API's own: one message, the right status. */
function bodyError(error: unknown, limitBytes: number): HttpException {
  const { type, message } = error as { type?: string; message?: string };
  switch (type) {
    case 'entity.parse.failed':
      return new BadRequestException(`Request body is not valid JSON: ${message}`);
    case 'entity.too.large':
      return tooLarge(limitBytes);
    case 'encoding.unsupported':
    case 'charset.unsupported':
      return new UnsupportedMediaTypeException(message ?? 'Unsupported body encoding');
    default:
      return new BadRequestException(message ?? 'Request body could not be read');
  }
}
