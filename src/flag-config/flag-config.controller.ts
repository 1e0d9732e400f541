import type { ServerResponse } from 'node:http';
import { Controller, Get, Req, Res } from '@nestjs/common';
import { ApiHeader, ApiNotModifiedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Request } from 'express';
import { CurrentPrincipal, RequirePermission } from '../auth/auth.decorators';
import { Principal } from '../auth/principal';
import { IgnoresUnknownQueryParameters } from '../http/query-parameters';
import { CONFIG_CACHE_CONTROL } from './config-payload';
import { RateLimit } from '../rate-limit/rate-limit.guard';
import { RateLimitBudget } from '../rate-limit/rate-limiter';
import { ConfigPayloadDto } from './dto/config-payload.dto';
import { CONFIG_PAYLOAD_EXAMPLE } from './dto/config.examples';
import { CONFIG_POLL_PERMISSION, FlagConfigPoll } from './flag-config-poll';

const VALIDATOR_HEADERS = {
  ETag: { description: 'Weak validator W/"<hash>" of the flags in the payload', schema: { type: 'string' } },
  'Cache-Control': { description: CONFIG_CACHE_CONTROL, schema: { type: 'string' } },
};

/**
 * Documents GET /v1/flags/config and serves it through Nest's pipeline when the lean path is not installed.
 * In production the same request is answered by FlagConfigPoll in front of the router, with the same
 * services; the e2e suite runs the poll's contract against both paths.
 */
@ApiTags('flags')
@Controller('flags/config')
export class FlagConfigController {
  constructor(private readonly poll: FlagConfigPoll) {}

  @Get()
  @RequirePermission(CONFIG_POLL_PERMISSION, {
    rateLimited:
      'RATE_LIMITED: more than CONFIG_RATE_LIMIT_PER_MINUTE polls a minute with this key, or more than AUTH_FAILURES_PER_MINUTE requests without a valid key from this address',
  })
  @RateLimit(RateLimitBudget.CONFIG)
  // Game clients may add a cache-busting parameter; the lean poll (FlagConfigPoll) never reads the query either.
  @IgnoresUnknownQueryParameters()
  @ApiOperation({
    summary: 'The config payload servers poll: every non-archived flag, ordered by key',
    description:
      'Send the last ETag in If-None-Match (W/"h", "h", h, a comma-separated list, or *) to get 304 when nothing changed. ' +
      'Limited to CONFIG_RATE_LIMIT_PER_MINUTE (1200) requests per minute per API key. Server-scoped flags are included: never forward them to clients. ' +
      'Query parameters are ignored (a cache-busting one is harmless).',
  })
  @ApiHeader({ name: 'If-None-Match', required: false, description: 'A previously received ETag' })
  @ApiOkResponse({ type: ConfigPayloadDto, headers: VALIDATOR_HEADERS, example: CONFIG_PAYLOAD_EXAMPLE })
  @ApiNotModifiedResponse({ description: 'The configuration is unchanged; empty body', headers: VALIDATOR_HEADERS })
  getConfig(@CurrentPrincipal() principal: Principal, @Req() request: Request, @Res() response: ServerResponse): void {
    this.poll.respond(principal, request, response);
  }
}
