import type { IncomingMessage, ServerResponse } from 'node:http';
import { Injectable, Optional } from '@nestjs/common';
import { permissionRefusal } from '../auth/auth.errors';
import { RequestAuthenticator } from '../auth/request-authenticator';
import { Principal } from '../auth/principal';
import { writeApiError } from '../http/error-response';
import { FlagConfigMetrics, PollCounts } from './flag-config.metrics';
import { Permission } from '../auth/permission';
import { ifNoneMatchMatches } from '../common/etag';
import { CONFIG_CACHE_CONTROL, ConfigPayload } from './config-payload';
import { RateLimitBudget, RateLimiter } from '../rate-limit/rate-limiter';
import { ThrottlerStorageRecord } from '../rate-limit/rate-limit.store';
import { FlagConfigCache } from './flag-config.cache';

export const CONFIG_POLL_PATH = '/v1/flags/config';
/** What a key needs to poll; the Nest route declares the same constant. */
export const CONFIG_POLL_PERMISSION = Permission.FLAGS_READ;

/**
 * GET /v1/flags/config, the path thousands of game servers poll. It is served in front of the Express
 * router (see installConfigPoll) with the very services the Nest route uses: the key index (or a session), the rate
 * limiter and the payload cache. On the steady path (cached key, in-memory limiter, cached payload) it
 * does no I/O, no serialisation and no awaiting.
 */
@Injectable()
export class FlagConfigPoll {
  /** 200, 304 and 429: a poll adds one to an integer, read into the metric at scrape time. */
  private readonly polls: PollCounts;

  constructor(
    private readonly requests: RequestAuthenticator,
    private readonly limiter: RateLimiter,
    private readonly cache: FlagConfigCache,
    @Optional() metrics?: FlagConfigMetrics,
  ) {
    this.polls = metrics?.pollCounts ?? new PollCounts();
  }

  matches(request: IncomingMessage): boolean {
    const { method, url } = request;
    if (method !== 'GET' && method !== 'HEAD') return false;
    return url === CONFIG_POLL_PATH || (url !== undefined && url.startsWith(`${CONFIG_POLL_PATH}?`));
  }

  /** The whole endpoint: authenticate, check the permission, count, answer. */
  handle(request: IncomingMessage, response: ServerResponse): void {
    const principal = this.requests.principal(request);
    if (!(principal instanceof Promise)) return this.authorised(principal, request, response);
    principal.then(
      (found) => this.authorised(found, request, response),
      (error: unknown) => writeApiError(response, error),
    );
  }

  /** The answer once guards have passed: 304 when If-None-Match matches, else the cached bytes. */
  respond(principal: Principal, request: IncomingMessage, response: ServerResponse): void {
    const payload = this.cache.get(principal.organizationId);
    const polls = this.polls;
    if (!(payload instanceof Promise)) return send(request, response, payload, polls);
    payload.then(
      (built) => send(request, response, built, polls),
      (error: unknown) => writeApiError(response, error),
    );
  }

  private authorised(principal: Principal, request: IncomingMessage, response: ServerResponse): void {
    const refusal = permissionRefusal(principal, CONFIG_POLL_PERMISSION);
    if (refusal) return writeApiError(response, refusal);
    const counted = this.limiter.hit(RateLimitBudget.CONFIG, principal.id);
    if (!(counted instanceof Promise)) return this.counted(counted, principal, request, response);
    counted.then(
      (record) => this.counted(record, principal, request, response),
      (error: unknown) => writeApiError(response, error),
    );
  }

  private counted(record: ThrottlerStorageRecord, principal: Principal, request: IncomingMessage, response: ServerResponse): void {
    if (record.isBlocked) {
      this.polls.limited += 1;
      return writeApiError(response, this.limiter.rejection(RateLimitBudget.CONFIG, record));
    }
    this.respond(principal, request, response);
  }
}

/**
 * Whether the request's If-None-Match names the payload (304): the rule of the poll, OFREP bulk and the stream's
 * refetches alike. Pollers send back the ETag exactly as they got it: one string compare instead of parsing.
 */
export function isNotModified(request: IncomingMessage, payload: ConfigPayload): boolean {
  return ifNoneMatches(request, payload.etag, payload.etagHeader);
}

/** The same rule for any validator: `etag` bare, `etagHeader` as served (`W/"<etag>"`). */
export function ifNoneMatches(request: IncomingMessage, etag: string, etagHeader: string): boolean {
  const ifNoneMatch = request.headers['if-none-match'];
  return ifNoneMatch === etagHeader || ifNoneMatchMatches(ifNoneMatch, etag);
}

function send(request: IncomingMessage, response: ServerResponse, payload: ConfigPayload, polls: PollCounts): void {
  if (isNotModified(request, payload)) {
    response.writeHead(304, { ETag: payload.etagHeader, 'Cache-Control': CONFIG_CACHE_CONTROL });
    response.end();
    polls.notModified += 1;
    return;
  }
  response.writeHead(200, {
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': payload.body.length,
    ETag: payload.etagHeader,
    'Cache-Control': CONFIG_CACHE_CONTROL,
  });
  response.end(request.method === 'HEAD' ? undefined : payload.body);
  polls.ok += 1;
}
