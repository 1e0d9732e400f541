import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Module } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import pino, { Logger as PinoLogger } from 'pino';
import type { Options } from 'pino-http';
import pinoPretty from 'pino-pretty';
import { requestIdOf } from '../http/request-id';
import { APP_CONFIG, AppConfig } from '../config/app-config';

/** Where log lines go: stdout; tests provide a stream of their own to read what was logged. */
export const LOG_DESTINATION = Symbol('LOG_DESTINATION');

@Module({
  providers: [{ provide: LOG_DESTINATION, useValue: process.stdout }],
  exports: [LOG_DESTINATION],
})
export class LogDestinationModule {}

/** What one request's log line holds. Deliberately built field by field: nothing else of the request is read. */
export interface RequestLogLine {
  method: string;
  /** The route pattern (`/v1/flags/:flagId`), never the raw URL, which may carry a signed URL's query. */
  route: string;
  status: number;
  durationMs: number;
  organizationId?: string;
  keyId?: string;
  /** A signed-in user's id, on requests made with a session. */
  userId?: string;
}

export function requestLogLine(request: IncomingMessage, response: ServerResponse, durationMs: number): RequestLogLine {
  // Set by the auth guard: an API key's or a signed-in user's (a session's) request.
  const principal = (request as { principal?: { organizationId: string; type: 'apiKey' | 'session'; id: string } }).principal;
  return {
    method: request.method ?? 'GET',
    route: routePattern(request),
    status: response.statusCode,
    durationMs,
    ...(principal && {
      organizationId: principal.organizationId,
      ...(principal.type === 'apiKey' ? { keyId: principal.id } : { userId: principal.id }),
    }),
  };
}

/**
 * Express's matched route; `(unmatched)` for a request no route took: an error before routing, or a wildcard
 * mount (`/v1/{*path}`, where middleware and Nest's not-found handler sit), which no API route is.
 */
function routePattern(request: IncomingMessage): string {
  const route = (request as IncomingMessage & { route?: { path?: unknown } }).route;
  return typeof route?.path === 'string' && !route.path.includes('*') ? route.path : '(unmatched)';
}

/**
 * pino-http's options: one JSON line per request when it ends, with exactly RequestLogLine and the request id;
 * no headers (so never an Authorization header or a key), no URL (never a signed URL's query), no body.
 */
export function requestLogOptions(config: AppConfig): Options {
  return {
    level: config.log.level,
    genReqId: (request) => requestIdOf(request) ?? randomUUID(),
    customAttributeKeys: { reqId: 'requestId' },
    // The request's own logger carries the request id only, and the line is built by the functions below.
    quietReqLogger: true,
    quietResLogger: true,
    customLogLevel: (_request, response, error) => (error || response.statusCode >= 500 ? 'error' : 'info'),
    customSuccessMessage: () => 'request completed',
    customErrorMessage: () => 'request failed',
    customSuccessObject: (request, response, values: { responseTime: number }) => requestLogLine(request, response, values.responseTime),
    customErrorObject: (request, response, error: Error, values: { responseTime: number }) => ({
      ...requestLogLine(request, response, values.responseTime),
      error: { type: error.name, message: error.message },
    }),
  };
}

/** The one pino logger of the app: request lines, and everything logged through Nest's Logger. */
export const ROOT_LOGGER = Symbol('ROOT_LOGGER');

/** A pino logger as LOG_LEVEL and LOG_FORMAT say: the app's, and the boot's until the app's exists (main.ts). */
export function rootLogger(log: AppConfig['log'], destination: NodeJS.WritableStream): PinoLogger {
  return pino(
    { level: log.level, base: undefined, timestamp: pino.stdTimeFunctions.isoTime },
    log.format === 'pretty' ? pinoPretty({ destination, colorize: false, singleLine: true }) : (destination as pino.DestinationStream),
  );
}

@Module({
  imports: [LogDestinationModule],
  providers: [
    {
      provide: ROOT_LOGGER,
      inject: [APP_CONFIG, LOG_DESTINATION],
      useFactory: (config: AppConfig, destination: NodeJS.WritableStream): PinoLogger => rootLogger(config.log, destination),
    },
  ],
  exports: [ROOT_LOGGER],
})
export class RootLoggerModule {}

/**
 * nestjs-pino over that one logger: Nest's Logger (start-up, migrations, the sweeper, shutdown, a 500's stack)
 * writes JSON lines at LOG_LEVEL. The request lines themselves come from the pino-http middleware that
 * configureApp mounts first, so that errors raised before routing are logged too (`useExisting`: the module
 * mounts no second one).
 *
 * nestjs-pino's own middleware, which would bind Nest's Logger to the request's logger, is mounted on no route
 * (`forRoutes: []`): it runs each request in an `AsyncLocalStorage` of its own, and once one has run, Node 20
 * propagates that store into every async resource and promise the process creates, a poll's included, for
 * good (see README, Sizing). A line that needs its request says so itself, as the unhandled-error line does
 * with the request id.
 */
export const LoggingModule = LoggerModule.forRootAsync({
  imports: [RootLoggerModule],
  inject: [ROOT_LOGGER],
  useFactory: (root: PinoLogger) => ({ pinoHttp: { logger: root }, useExisting: true as const, forRoutes: [] }),
});
