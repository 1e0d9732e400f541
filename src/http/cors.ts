import type { IncomingMessage, ServerResponse } from 'node:http';
import cors from 'cors';
import type { CorsOrigins } from '../config/app-config';
import type { SurfaceMap } from './surfaces';

type Middleware = (request: IncomingMessage, response: ServerResponse, next: (error?: unknown) => void) => void;

const PREFLIGHT = { maxAge: 600, optionsSuccessStatus: 204, preflightContinue: false } as const;

/**
 * The upload host: the signed URL is the authorisation and no cookie is ever read, so every origin may use
 * it, errors included.
 */
const UPLOAD_CORS = cors({ ...PREFLIGHT, origin: '*', methods: ['PUT', 'POST'], allowedHeaders: ['Content-Type'] });

/** The CDN: public addresses, readable by any page, including into a canvas or a WebGL texture. */
const CDN_CORS = cors({
  ...PREFLIGHT,
  origin: '*',
  methods: ['GET', 'HEAD'],
  allowedHeaders: ['Range', 'If-None-Match', 'If-Range'],
  exposedHeaders: ['ETag', 'Content-Length', 'Content-Range', 'Accept-Ranges'],
});

/** Headers a browser client of the API sends, and those it needs to read back. */
export const API_CORS_ALLOWED_HEADERS = ['Authorization', 'Content-Type', 'If-Match', 'If-None-Match', 'X-API-Key'];
export const API_CORS_EXPOSED_HEADERS = ['ETag', 'Retry-After', 'X-Request-Id'];

/** The API under base_url (the admin API aside) and OFREP, for the origins CORS_ORIGINS lists. */
export function apiCors(origins: CorsOrigins | undefined): Middleware | undefined {
  if (origins === undefined) return undefined;
  return cors({
    ...PREFLIGHT,
    // A list makes the answer depend on Origin, and the cors package then adds `Vary: Origin`.
    origin: origins === '*' ? '*' : [...origins],
    methods: ['GET', 'HEAD', 'POST', 'PATCH', 'DELETE'],
    allowedHeaders: API_CORS_ALLOWED_HEADERS,
    exposedHeaders: API_CORS_EXPOSED_HEADERS,
  });
}

/**
 * One middleware for the whole HTTP surface, mounted ahead of body parsing so that errors raised before
 * routing (a malformed body, an unknown route) carry the same headers as the route's own answers. Preflights
 * (`OPTIONS` with `Access-Control-Request-Method`) are answered here with 204.
 */
export function corsMiddleware(origins: CorsOrigins | undefined, surfaces: SurfaceMap): Middleware {
  const api = apiCors(origins);
  return (request, response, next) => {
    const surface = surfaces.of(request.url);
    if (surface === 'upload') return UPLOAD_CORS(request, response, next);
    if (surface === 'cdn') return CDN_CORS(request, response, next);
    // The API under base_url (storage included) and OFREP; never the admin API.
    if ((surface === 'api' || surface === 'storage' || surface === 'ofrep') && api) return api(request, response, next);
    next();
  };
}
