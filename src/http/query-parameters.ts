import { applyDecorators, BadRequestException, CallHandler, ExecutionContext, Injectable, NestInterceptor, SetMetadata, Type } from '@nestjs/common';
import { ROUTE_ARGS_METADATA } from '@nestjs/common/constants';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum';
import { ApiExtension } from '@nestjs/swagger';
import { getMetadataStorage } from 'class-validator';
import type { Request } from 'express';
import type { Observable } from 'rxjs';
import type { Surface, SurfaceMap } from './surfaces';

const IGNORES_UNKNOWN_QUERY = 'http:ignores-unknown-query-parameters';

/** The OpenAPI extension an operation that ignores unknown query parameters carries (`'ignored'`). */
export const UNKNOWN_QUERY_EXTENSION = 'x-unknown-query-parameters';

/** The API under base_url and the admin API; not the upload host, the CDN, OFREP, health or metrics. */
const CHECKED_SURFACES: ReadonlySet<Surface> = new Set(['api', 'admin', 'storage']);

/** At most this many unknown names are listed in the message, each cut to NAME_LENGTH characters. */
const NAMES_LISTED = 5;
const NAME_LENGTH = 64;

/**
 * The route ignores query parameters it does not take instead of refusing them, for clients that add their
 * own: the config poll (a game client's cache-busting parameter), an SSO callback (an identity provider's).
 * Stated in the OpenAPI operation as `x-unknown-query-parameters: ignored`.
 */
export const IgnoresUnknownQueryParameters = () =>
  applyDecorators(SetMetadata(IGNORES_UNKNOWN_QUERY, true), ApiExtension(UNKNOWN_QUERY_EXTENSION, 'ignored'));

/** Whether the operations of `surface` refuse unknown query parameters (unless they ignore them). */
export function refusesUnknownQueryParameters(surface: Surface): boolean {
  return CHECKED_SURFACES.has(surface);
}

type Accepted = ReadonlySet<string> | 'any';

/**
 * Refuses a query parameter the route does not take with 400 naming it, on every route of the API and the admin
 * API: an ignored parameter reads as "not sent", and `DELETE /v1/storage/purge?dryRun=true` (dryRun is a body
 * field) purged every file. A route takes the parameters it reads: each `@Query('name')`, and the fields of its
 * `@Query()` DTO (those it validates, as the whitelist does); a route without either takes none.
 *
 * Global, after the guards (a request without a valid key is a 401 whatever its query) and before the pipes
 * and the handler, so nothing has happened yet when it refuses. The lean config poll never comes here.
 */
@Injectable()
export class UnknownQueryParameters implements NestInterceptor {
  private readonly accepted = new WeakMap<object, Accepted>();

  constructor(private readonly surfaces: SurfaceMap) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    if (context.getType() !== 'http') return next.handle();
    const request = context.switchToHttp().getRequest<Request>();
    if (!refusesUnknownQueryParameters(this.surfaces.of(request.originalUrl ?? request.url))) return next.handle();
    const accepted = this.acceptedBy(context.getClass(), context.getHandler());
    if (accepted === 'any') return next.handle();
    const unknown = Object.keys(request.query ?? {}).filter((name) => !accepted.has(name));
    if (unknown.length > 0) throw new BadRequestException(unknownQueryMessage(unknown, accepted));
    return next.handle();
  }

  private acceptedBy(controller: Type, handler: ReturnType<ExecutionContext['getHandler']>): Accepted {
    let accepted = this.accepted.get(handler);
    if (accepted === undefined) {
      accepted = Reflect.getMetadata(IGNORES_UNKNOWN_QUERY, handler) === true ? 'any' : queryParametersOf(controller, handler.name);
      this.accepted.set(handler, accepted);
    }
    return accepted;
  }
}

/** The query parameters a handler reads, from its `@Query()` arguments. */
export function queryParametersOf(controller: Type, handlerName: string): ReadonlySet<string> {
  const args = (Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, handlerName) ?? {}) as Record<string, { index: number; data?: unknown }>;
  const types = (Reflect.getMetadata('design:paramtypes', controller.prototype, handlerName) ?? []) as unknown[];
  const names = new Set<string>();
  for (const [key, { index, data }] of Object.entries(args)) {
    if (Number(key.split(':')[0]) !== RouteParamtypes.QUERY) continue;
    if (typeof data === 'string') names.add(data);
    // The whole query, as a DTO: the fields the validation pipe's whitelist lets through. Any other type
    // (a plain record) names none, so a route that reads the query must say what it reads.
    else if (data === undefined && typeof types[index] === 'function') {
      for (const rule of getMetadataStorage().getTargetValidationMetadatas(types[index] as Type, '', false, false)) names.add(rule.propertyName);
    }
  }
  return names;
}

/** `Unknown query parameter "x": this operation takes only a, b` (or "no query parameters"). */
export function unknownQueryMessage(unknown: readonly string[], accepted: ReadonlySet<string>): string {
  const quoted = unknown.slice(0, NAMES_LISTED).map((name) => JSON.stringify(name.length > NAME_LENGTH ? `${name.slice(0, NAME_LENGTH)}…` : name));
  const more = unknown.length > NAMES_LISTED ? ` and ${unknown.length - NAMES_LISTED} more` : '';
  const takes = accepted.size === 0 ? 'no query parameters' : `only ${[...accepted].join(', ')}`;
  return `Unknown query parameter${unknown.length === 1 ? '' : 's'} ${quoted.join(', ')}${more}: this operation takes ${takes}`;
}
