import { BadRequestException, HttpException, PayloadTooLargeException, UnsupportedMediaTypeException } from '@nestjs/common';
import { json, NextFunction, Request, Response } from 'express';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';

export const JSON_BODY_LIMIT = '256kb';
const JSON_BODY_LIMIT_BYTES = 256 * 1024;

/** A route that takes larger JSON bodies than JSON_BODY_LIMIT (a flag import: 50 flags with 4 KB values and rules). */
export interface LargeJsonRoute {
  method: string;
  /** The path as the router sees it, without the query; or a pattern of paths (one with an id: PATCH /v1/change-requests/{id}). */
  path: string | RegExp;
  limitBytes: number;
}

/** A body on these means nothing in HTTP; it is left unread rather than parsed into errors no route documents. */
const BODYLESS_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/** What each route takes as a JSON body: read by the body parser and by the answer to `Expect: 100-continue`. */
export class JsonBodyLimits {
  private readonly largeRoutes: readonly LargeJsonRoute[];

  /** `isRawBodyPath`: the upload host, whose bodies are file bytes streamed to the store, never parsed here. */
  constructor(
    readonly isRawBodyPath: (path: string) => boolean,
    largeRoutes: readonly LargeJsonRoute[] = [],
  ) {
    this.largeRoutes = largeRoutes.map((route) => ({ ...route, path: typeof route.path === 'string' ? route.path.toLowerCase() : route.path }));
  }

  /** The limits in use, JSON_BODY_LIMIT's first. */
  get sizes(): number[] {
    return [JSON_BODY_LIMIT_BYTES, ...this.largeRoutes.map((route) => route.limitBytes)];
  }

  /** The most bytes of JSON a request may send, or null when its body is not parsed here (no body, or an upload). */
  of(request: IncomingMessage): number | null {
    const method = request.method ?? 'GET';
    const path = pathOf(request.url);
    if (BODYLESS_METHODS.has(method) || this.isRawBodyPath(path)) return null;
    const lower = path.toLowerCase();
    const matches = (path: string | RegExp) => (typeof path === 'string' ? path === lower : path.test(lower));
    return this.largeRoutes.find((route) => route.method === method && matches(route.path))?.limitBytes ?? JSON_BODY_LIMIT_BYTES;
  }
}

/**
 * Parses JSON request bodies, except on the upload host whose bodies are file bytes streamed to the store.
 * A body that is not JSON is refused (415) rather than ignored: an ignored body reads as "no fields", which
 * for a purge means "every file".
 */
export function jsonBody(limits: JsonBodyLimits) {
  const parsers = new Map(limits.sizes.map((limit) => [limit, json({ limit })]));
  return (request: Request, response: Response, next: NextFunction): void => {
    const limitBytes = limits.of(request);
    if (limitBytes === null) return next();
    const parse = parsers.get(limitBytes)!;
    // body-parser sees a declared length over the limit at once too, but reads the whole body before it
    // answers (up to HTTP_REQUEST_TIMEOUT_SECONDS of a 1 GB upload nobody wants): answered now, and the
    // connection closed after the answer by lingering (lingering-close.ts) rather than kept for the rest.
    if (declaredLength(request) > limitBytes) return next(tooLarge(limitBytes));
    parse(request, response, (error?: unknown) => {
      if (error) return next(bodyError(error, limitBytes));
      if (request.body === undefined && hasBody(request)) {
        return next(new UnsupportedMediaTypeException('Request bodies must be JSON: send Content-Type: application/json'));
      }
      next();
    });
  };
}

/**
 * Answers `Expect: 100-continue` for every route, in one place: a body declared longer than the route takes is
 * answered 413 without `100 Continue` (so the client never sends it), any other gets `100 Continue` (uploads
 * included: the upload checks its own limits) and is then served as usual.
 */
export function answerExpectContinue(server: Server, limits: JsonBodyLimits): void {
  server.on('checkContinue', (request: IncomingMessage, response: ServerResponse) => {
    const limitBytes = limits.of(request);
    // Served without 100 Continue, the request meets the body parser's 413 on its declared length.
    if (limitBytes === null || declaredLength(request) <= limitBytes) response.writeContinue();
    server.emit('request', request, response);
  });
}

/** The body's declared length in bytes, 0 when none is declared (a chunked body is limited as it streams). */
function declaredLength(request: IncomingMessage): number {
  const length = request.headers['content-length'];
  return length !== undefined && /^\d+$/.test(length) ? Number(length) : 0;
}

/** The request's path, as the router matches it (without the query). */
function pathOf(url: string | undefined): string {
  const path = url ?? '/';
  const query = path.search(/[?#]/);
  return query === -1 ? path : path.slice(0, query);
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
