import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { INestApplication, RequestMethod } from '@nestjs/common';
import { NestExpressApplication } from '@nestjs/platform-express';
import type { Logger as PinoLogger } from 'pino';
import { pinoHttp } from 'pino-http';
import { DocumentBuilder, OpenAPIObject, SwaggerCustomOptions, SwaggerModule } from '@nestjs/swagger';
import { ADMIN_SECURITY, API_KEY_HEADER_SECURITY, API_KEY_SECURITY, SESSION_SECURITY } from '../auth/auth.decorators';
import { SESSION_COOKIE } from '../auth/sessions/session-token';
import { FLAG_IMPORT_PATH, IMPORT_BODY_LIMIT_BYTES } from '../flags/flag-transfer.controller';
import { CHANGE_REQUEST_BODY_LIMIT_BYTES, CHANGE_REQUEST_PATH, CHANGE_REQUESTS_PATH } from '../change-requests/change-requests.controller';
import { API_PREFIX } from '../http/api-prefix';
import { apiCors, corsMiddleware } from '../http/cors';
import { errorShapeOf, writeApiError } from '../http/error-response';
import { applyHttpTimeouts } from '../http/http-timeouts';
import { addCommonResponses } from '../http/openapi-common-responses';
import { answerExpectContinue, jsonBody, JsonBodyLimits } from '../http/json-body';
import { cspHash, setPageSecurityHeaders } from '../http/page-headers';
import { RawInputPipe } from '../http/raw-input.pipe';
import { requestIdMiddleware, requestIdOf } from '../http/request-id';
import { createValidationPipe } from '../common/validation';
import { AppConfig } from '../config/app-config';
import { CONFIG_POLL_PATH, FlagConfigPoll } from '../flag-config/flag-config-poll';
import { OFREP_ROOT } from '../flag-config/ofrep/ofrep.controller';
import { HEALTH_ROUTE } from '../health/health.controller';
import { requestLogLine, requestLogOptions, ROOT_LOGGER } from '../logging/logging.module';
import { httpMetrics } from '../metrics/http-metrics';
import { Metrics } from '../metrics/metrics';
import { METRICS_ROUTE, METRICS_SECURITY } from '../metrics/metrics.controller';
import { CDN_ROUTE, UPLOAD_ROUTE } from '../storage/storage-routes';
import { consoleAssets } from '../console/console-assets';
import { SURFACES } from './surfaces';

/** Routes served at the root of PUBLIC_URL rather than under base_url. */
export const ROOT_ROUTES = [
  { path: HEALTH_ROUTE, method: RequestMethod.ALL },
  { path: `${HEALTH_ROUTE}/live`, method: RequestMethod.ALL },
  { path: `${HEALTH_ROUTE}/ready`, method: RequestMethod.ALL },
  { path: METRICS_ROUTE, method: RequestMethod.ALL },
  { path: `${OFREP_ROOT}/{*path}`, method: RequestMethod.ALL },
  { path: `${UPLOAD_ROUTE}/{*path}`, method: RequestMethod.ALL },
  { path: `${CDN_ROUTE}/{*path}`, method: RequestMethod.ALL },
];

/**
 * Everything about the HTTP application that is not a module: shared by main.ts and the e2e tests so that
 * tests exercise exactly what production serves.
 */
export function configureApp(
  app: NestExpressApplication,
  config: AppConfig,
  options: { leanConfigPoll?: boolean; /** Where the built console is (tests serve a fixture). */ consoleDir?: string } = {},
): void {
  const logger = app.get<PinoLogger>(ROOT_LOGGER);
  if (options.leanConfigPoll ?? true) installConfigPoll(app, config, logger);
  // Outermost, so that the poll's requests are watched too (bodyless ones, all of them in practice, cost a check).
  applyHttpTimeouts(app.getHttpServer(), config.timeouts, {
    isUpload: (request) => SURFACES.isUpload(request.url),
    answer: (request, response, error) => writeApiError(response, error, requestIdOf(request), errorShapeOf(SURFACES.of(request.url))),
  });
  app.disable('x-powered-by');
  // Express would tag every JSON answer with an ETag and answer `If-None-Match` (even `*`, with no tag at
  // all) with a 304 on any GET. The routes that promise validators (the config poll, the CDN) set their own
  // ETag and answer conditional requests themselves; everywhere else conditionals are ignored.
  app.set('etag', false);
  const express = app.getHttpAdapter().getInstance() as { request: object };
  Object.defineProperty(express.request, 'fresh', { get: () => false });
  app.set('trust proxy', config.trustProxy);
  app.use(requestIdMiddleware);
  app.use(httpMetrics(app.get(Metrics)));
  // First, so that every request gets its line, those refused before routing included.
  app.use(pinoHttp({ logger, ...requestLogOptions(config) }));
  // The console's pages and assets (GET and HEAD under /console, and the redirect of /): files, no body, no CORS.
  app.use(consoleAssets(config, options.consoleDir));
  // Before body parsing, so that errors raised ahead of routing carry the CORS headers too.
  app.use(corsMiddleware(config.corsOrigins, SURFACES));
  // Upload bodies are file bytes streamed to the object store, never parsed, whatever their Content-Type.
  const bodyLimits = new JsonBodyLimits(
    (url) => SURFACES.isUpload(url),
    [
      { method: 'POST', path: FLAG_IMPORT_PATH, limitBytes: IMPORT_BODY_LIMIT_BYTES },
      { method: 'POST', path: CHANGE_REQUESTS_PATH, limitBytes: CHANGE_REQUEST_BODY_LIMIT_BYTES },
      { method: 'PATCH', path: CHANGE_REQUEST_PATH, limitBytes: CHANGE_REQUEST_BODY_LIMIT_BYTES },
    ],
  );
  app.use(jsonBody(bodyLimits));
  answerExpectContinue(app.getHttpServer(), bodyLimits);
  app.setGlobalPrefix(API_PREFIX, { exclude: ROOT_ROUTES });
  app.useGlobalPipes(new RawInputPipe(), createValidationPipe());
  setupOpenApi(app, config);
}

const DOCS_PATH = '/docs';

function setupOpenApi(app: INestApplication, config: AppConfig): void {
  const options: SwaggerCustomOptions = {
    jsonDocumentUrl: 'docs-json',
    useGlobalPrefix: false,
    // No badge fetched from validator.swagger.io (the page reaches nothing but this service), and no top bar, whose
    // logo writes an inline <style> that the CSP would refuse (its URL box is hidden anyway).
    swaggerOptions: { validatorUrl: null, layout: 'BaseLayout' },
  };
  // Ahead of Swagger UI's routes and files, so that the page and its assets carry the headers.
  const csp = docsContentSecurityPolicy(config, options);
  app.use((request: IncomingMessage, response: ServerResponse, next: () => void) => {
    const path = (request.url ?? '').split('?')[0];
    if (path === DOCS_PATH || path.startsWith(`${DOCS_PATH}/`)) setPageSecurityHeaders(response, csp);
    next();
  });
  SwaggerModule.setup(DOCS_PATH.slice(1), app, openApiDocument(app, config), options);
}

/**
 * /docs's own Content-Security-Policy: Swagger UI's scripts and style sheet from this origin (its start-up script is a
 * file, swagger-ui-init.js, not inline), its page's inline styles by their hashes only (read from the page Swagger UI
 * writes, so an upgrade that changes them keeps working), "Try it out" calls to this origin and PUBLIC_URL's, and
 * never framed.
 */
export function docsContentSecurityPolicy(config: AppConfig, options: SwaggerCustomOptions): string {
  const page = swaggerPage('./', options);
  const blocks = [...page.matchAll(/<style>([\s\S]*?)<\/style>/g)].map((match) => cspHash(match[1]));
  const attributes = [...page.matchAll(/ style="([^"]*)"/g)].map((match) => cspHash(match[1]));
  const publicOrigin = new URL(config.urls.publicUrl).origin;
  return [
    "default-src 'none'",
    "script-src 'self'",
    // 'unsafe-hashes' lets the hashes match style attributes too (the page's one hidden SVG), nothing else inline.
    ["style-src 'self'", ...new Set(blocks), ...(attributes.length > 0 ? ["'unsafe-hashes'", ...new Set(attributes)] : [])].join(' '),
    "img-src 'self' data:",
    "font-src 'self' data:",
    `connect-src 'self' ${publicOrigin}`,
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/**
 * The page SwaggerModule serves at /docs, as it writes it: @nestjs/swagger's own template function, which its package
 * exports no name for (its `exports` map lists only the package root), so it is loaded by file from beside that root.
 * The docs browser test and test/e2e/page-security-headers check that the hashes match the page served.
 */
function swaggerPage(baseUrl: string, options: SwaggerCustomOptions): string {
  const swaggerUi = createRequire(require.resolve('@nestjs/swagger'))('./swagger-ui/swagger-ui.js') as {
    buildSwaggerHTML(baseUrl: string, options: SwaggerCustomOptions): string;
  };
  return swaggerUi.buildSwaggerHTML(baseUrl, options);
}

/**
 * The OpenAPI document of the app's routes (served at /docs-json). It reads only the controllers' metadata, so
 * src/openapi.ts can also make it from an app in preview mode, with no database: what the console's client is
 * generated from at build time.
 */
export function openApiDocument(app: INestApplication, config: AppConfig): OpenAPIObject {
  const document = SwaggerModule.createDocument(
    app,
    new DocumentBuilder()
      .setTitle('Flagstore')
      .setDescription(
        'Typed feature flags for game servers and file storage for the files games upload. ' +
          "Every endpoint under /v1 takes `Authorization: Bearer <API_KEY>`, or a signed-in person's session cookie with " +
          '`X-Organization-Id` (and `X-CSRF-Token` on changes); the admin API takes the ADMIN_TOKEN instead.',
      )
      .setVersion('1')
      .addServer(config.urls.publicUrl)
      // bearerFormat is only a hint, but @nestjs/swagger defaults it to JWT, which neither credential is.
      .addBearerAuth(
        {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'opaque fsk_ API key',
          description:
            'An API key issued by the admin API (POST /v1/admin/organizations/{orgId}/api-keys): `fsk_` and 43 base64url ' +
            'characters, an opaque random string (not a JWT: it carries nothing readable). Shown once; the service keeps only its hash.',
        },
        API_KEY_SECURITY,
      )
      .addBearerAuth(
        {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'opaque secret (ADMIN_TOKEN)',
          description: 'The ADMIN_TOKEN of this deployment: an opaque secret of at least 32 characters chosen by the operator (not a JWT)',
        },
        ADMIN_SECURITY,
      )
      .addCookieAuth(
        SESSION_COOKIE,
        {
          type: 'apiKey',
          in: 'cookie',
          name: SESSION_COOKIE,
          description:
            'The session of a signed-in person (POST /v1/auth/login sets it; HttpOnly). On the routes of an organization send ' +
            '`X-Organization-Id: <one of your organizations>` with it; on POST, PUT, PATCH and DELETE also `X-CSRF-Token: <csrfToken>` ' +
            'from the sign-in answer or GET /v1/auth/session. A request that carries a bearer key is judged by the key alone.',
        },
        SESSION_SECURITY,
      )
      .addApiKey(
        { type: 'apiKey', in: 'header', name: 'X-API-Key', description: 'An API key (`fsk_...`, as for bearer authentication), on the OFREP routes' },
        API_KEY_HEADER_SECURITY,
      )
      .addBearerAuth(
        {
          type: 'http',
          scheme: 'bearer',
          bearerFormat: 'opaque secret (METRICS_TOKEN)',
          description: 'The METRICS_TOKEN of this deployment (GET /metrics): an opaque secret of at least 32 characters (not a JWT)',
        },
        METRICS_SECURITY,
      )
      .build(),
  );
  return addCommonResponses(document, SURFACES);
}

/**
 * Puts the config poll in front of Express: a poll request is answered before Express builds its request
 * and response wrappers or walks its router, which is most of what a request costs on this path.
 * Every other request goes to Express untouched.
 */
function installConfigPoll(app: NestExpressApplication, config: AppConfig, logger: PinoLogger): void {
  const server = app.getHttpServer();
  const poll = app.get(FlagConfigPoll);
  // The API's CORS rules (CORS_ORIGINS), applied here since this path runs ahead of Express's middleware.
  const cors = apiCors(config.corsOrigins);
  const [express, ...others] = server.listeners('request') as ((req: IncomingMessage, res: ServerResponse) => void)[];
  if (!express || others.length > 0) throw new Error('Expected exactly one request listener (Express) on the HTTP server');
  server.removeListener('request', express);
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    if (!poll.matches(request)) return express(request, response);
    const started = Date.now();
    // Only GET and HEAD come here, never a preflight, so the cors middleware only sets headers, synchronously.
    cors?.(request, response, noop);
    poll.handle(request, response);
    // Only what is not a 200, 304 or 429 is logged, so that the hot path stays free: a cached poll has
    // answered by now, and costs one status check.
    if (response.writableEnded) logUnusualPoll(logger, request, response, started);
    else response.once('finish', () => logUnusualPoll(logger, request, response, started));
  });
}

function noop(): void {}

const ROUTINE_POLL_STATUSES = new Set([200, 304, 429]);

function logUnusualPoll(logger: PinoLogger, request: IncomingMessage, response: ServerResponse, started: number): void {
  const status = response.statusCode;
  if (ROUTINE_POLL_STATUSES.has(status)) return;
  const line = { ...requestLogLine(request, response, Date.now() - started), route: CONFIG_POLL_PATH };
  if (status >= 500) logger.error(line, 'request failed');
  else logger.info(line, 'request completed');
}
