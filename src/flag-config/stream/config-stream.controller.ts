import type { ServerResponse } from 'node:http';
import { Controller, Get, Inject, NotFoundException, Query, Req, Res, ServiceUnavailableException, UnauthorizedException } from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiCookieAuth,
  ApiForbiddenResponse,
  ApiNotFoundResponse,
  ApiHeader,
  ApiOkResponse,
  ApiOperation,
  ApiQuery,
  ApiTags,
  ApiTooManyRequestsResponse,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import type { Request } from 'express';
import { ApiKeyAuthenticator } from '../../auth/api-key-authenticator';
import { API_KEY_SECURITY, RETRY_AFTER, SESSION_SECURITY } from '../../auth/auth.decorators';
import { Public } from '../../http/access';
import { permissionRefusal } from '../../auth/auth.errors';
import { countedAuthentication, RequestAuthenticator } from '../../auth/request-authenticator';
import { AuthenticatedRequest, Principal } from '../../auth/principal';
import { CLOCK, Clock } from '../../common/clock';
import { ApiErrorDto } from '../../common/dto/api-error.dto';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import { RateLimitedError } from '../../rate-limit/rate-limited.error';
import { RateLimitBudget, RateLimiter } from '../../rate-limit/rate-limiter';
import { CONFIG_POLL_PERMISSION } from '../flag-config-poll';
import { FlagConfigCache } from '../flag-config.cache';
import { ConfigStreamHub, MAX_STREAMS_PER_KEY } from './config-stream.hub';
import { STREAM_TOKENS, StreamTokens } from './stream-token';

export const CONFIG_STREAM_PATH = '/v1/flags/config/stream';

function tooManyStreams(principal: Principal): RateLimitedError {
  const holder = principal.type === 'apiKey' ? 'This key' : 'You';
  return new RateLimitedError(
    `${holder} already hold${principal.type === 'apiKey' ? 's' : ''} ${MAX_STREAMS_PER_KEY} open streams; close one first`,
    60,
  );
}

function shuttingDown(): ServiceUnavailableException {
  return Object.assign(new ServiceUnavailableException('This instance is shutting down; reconnect'), { retryAfterSeconds: 1 });
}

/**
 * GET /v1/flags/config/stream: server-sent events, one per change of the organization's flags (README,
 * "Change stream"). Servers authenticate with their bearer key; browsers, whose EventSource sends no
 * headers, with the signed `?token=` an OFREP bulk answer hands them. Opening a stream counts one request
 * against the key's config budget.
 */
@ApiTags('flags')
@Controller('flags/config/stream')
export class ConfigStreamController {
  constructor(
    private readonly hub: ConfigStreamHub,
    private readonly cache: FlagConfigCache,
    private readonly limiter: RateLimiter,
    private readonly authenticator: ApiKeyAuthenticator,
    private readonly requests: RequestAuthenticator,
    @Inject(STREAM_TOKENS) private readonly tokens: StreamTokens,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  @Get()
  // Authenticated here: by the bearer key as everywhere, or by a stream token, which the global guard does not know.
  @Public()
  @ApiBearerAuth(API_KEY_SECURITY)
  @ApiCookieAuth(SESSION_SECURITY)
  @ApiOperation({
    summary: 'Change stream (server-sent events): an event on connect and after every change of the flags',
    description:
      'Each event is `id: <etag>`, `event: message`, `data: {"type":"refetchEvaluation","etag":"<etag>","lastModified":<unix seconds>}`: ' +
      're-read GET /v1/flags/config (or OFREP bulk) with If-None-Match. A reconnect whose Last-Event-ID is the current ETag gets no ' +
      'immediate event. A comment every 15 s; the stream ends after 10 minutes with a retry: hint. At most 20 open streams per key ' +
      'across the deployment. Opening one counts against CONFIG_RATE_LIMIT_PER_MINUTE. Browsers pass the ?token= of an OFREP bulk answer ' +
      'instead of the Authorization header. A stream opened with a session ends when the session ends (logout, password change, ' +
      'idle or past its lifetime: an open stream is not a use of the session) or the person leaves the organization. FLAGS_READ.',
  })
  @ApiQuery({ name: 'token', required: false, description: "A signed stream token (OFREP bulk answer's eventStreams); never log it" })
  @ApiQuery({
    name: 'organizationId',
    required: false,
    description:
      "With a session cookie (the console's EventSource, which sends no headers): one of the user's organizations, as X-Organization-Id names it elsewhere",
  })
  @ApiHeader({ name: 'Last-Event-ID', required: false, description: 'The id (ETag) of the last event received' })
  @ApiOkResponse({ description: 'The event stream', content: { 'text/event-stream': { schema: { type: 'string' } } } })
  @ApiUnauthorizedResponse({
    type: ApiErrorDto,
    description: 'Missing, unknown or revoked API key; an invalid, expired or revoked stream token; or a session that has ended',
  })
  @ApiForbiddenResponse({
    type: ApiErrorDto,
    description: "The API key (or the session's role) lacks FLAGS_READ; with a session, no ?organizationId= of one of the user's organizations",
  })
  @ApiNotFoundResponse({ type: ApiErrorDto, description: 'The change stream is off on this deployment (STREAMS_ENABLED=false)' })
  @ApiTooManyRequestsResponse({
    type: ApiErrorDto,
    headers: RETRY_AFTER,
    description: 'RATE_LIMITED: past CONFIG_RATE_LIMIT_PER_MINUTE, or 20 streams already open for this key, or too many failed authentications',
  })
  async stream(
    @Req() request: Request,
    @Res() response: ServerResponse,
    @Query('token') token?: unknown,
    // Read by RequestAuthenticator from the URL; declared so that the query's rule knows it.
    @Query('organizationId') _organizationId?: unknown,
  ): Promise<void> {
    if (!this.config.streamsEnabled) throw new NotFoundException('The change stream is off (STREAMS_ENABLED=false)');
    const principal =
      typeof token === 'string' || Array.isArray(token)
        ? await this.fromToken(request, token)
        : await this.requests.principal(request, { stream: true });
    (request as AuthenticatedRequest).principal = principal; // for the request's log line
    const refusal = permissionRefusal(principal, CONFIG_POLL_PERMISSION);
    if (refusal) throw refusal;
    await this.limiter.take(RateLimitBudget.CONFIG, principal.id);
    if (this.hub.isClosing) throw shuttingDown();
    // The slot is taken before the payload is awaited: opens racing for a key's last place cannot all pass.
    const slot = await this.hub.reserve(principal.id);
    if (!slot) throw tooManyStreams(principal);
    let payload;
    try {
      payload = await this.cache.get(principal.organizationId);
    } catch (error) {
      slot.release();
      throw error;
    }
    // Shutdown began while the slot or the payload was awaited: the streams have been ended, and so is this one.
    if (this.hub.isClosing) {
      slot.release();
      throw shuttingDown();
    }
    const lastEventId = request.headers['last-event-id'];
    this.hub.open(principal, response, payload, typeof lastEventId === 'string' ? lastEventId : undefined, slot);
  }

  /** A token is held to the address's budget of failed authentications, as a bad key is. */
  private fromToken(request: Request, token: string | string[]): Promise<Principal> {
    return countedAuthentication(
      this.requests.failures,
      request,
      async () => {
        const grant = typeof token === 'string' ? this.tokens.verify(token, this.clock.now()) : null;
        return grant ? this.authenticator.activeKey(grant.organizationId, grant.keyId) : null;
      },
      () => new UnauthorizedException('The stream token is invalid or expired, or its key was revoked; read a new one from OFREP bulk evaluation'),
    );
  }
}
