import type { IncomingMessage, ServerResponse } from 'node:http';
import cors from 'cors';
import type { CorsOrigins } from '../config/app-config';
import { CDN_ROUTE, UPLOAD_ROUTE } from '../storage/storage-routes';
import { API_PREFIX } from './api-prefix';

type Middleware = (request: IncomingMessage, response: ServerResponse, next: (error?: unknown) => void) => void;

/** Where a request path sits as far as browsers are concerned. */
export type CorsSurface = 'upload' | 'cdn' | 'api' | 'none';

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
export const API_CORS_ALLOWED_HEADERS = ['Authorization', 'Content-Type', 'If-None-Match', 'X-API-Key'];
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
 * Which CORS rules a path falls under. Case-insensitive, as the router is: `/V1/Admin` reaches the admin API
 * and must be refused to browsers just as `/v1/admin` is.
 */
export function corsSurfaceOf(url: string | undefined): CorsSurface {
  const query = url?.indexOf('?') ?? -1;
  const path = (query === -1 ? (url ?? '') : url!.slice(0, query)).toLowerCase();
  const under = (prefix: string) => path === prefix || path.startsWith(`${prefix}/`);
  if (under(`/${UPLOAD_ROUTE}`)) return 'upload';
  if (under(`/${CDN_ROUTE}`)) return 'cdn';
  if (under(`/${API_PREFIX}/admin`)) return 'none';
  if (under(`/${API_PREFIX}`) || under('/ofrep')) return 'api';
  return 'none';
}

/**
 * One middleware for the whole HTTP surface, mounted ahead of body parsing so that errors raised before
 * routing (a malformed body, an unknown route) carry the same headers as the route's own answers. Preflights
 * (`OPTIONS` with `Access-Control-Request-Method`) are answered here with 204.
 */
export function corsMiddleware(origins: CorsOrigins | undefined): Middleware {
  const api = apiCors(origins);
  return (request, response, next) => {
    const surface = corsSurfaceOf(request.url);
    if (surface === 'upload') return UPLOAD_CORS(request, response, next);
    if (surface === 'cdn') return CDN_CORS(request, response, next);
    if (surface === 'api' && api) return api(request, response, next);
    next();
  };
}
