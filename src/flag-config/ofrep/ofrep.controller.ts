import type { ServerResponse } from 'node:http';
import { Body, Controller, HttpCode, HttpStatus, Inject, Param, Post, Req, Res } from '@nestjs/common';
import {
  ApiHeader,
  ApiNotFoundResponse,
  ApiNotModifiedResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiQuery,
  ApiTags,
  ApiBadRequestResponse,
} from '@nestjs/swagger';
import type { Request } from 'express';
import { AcceptsApiKeyHeader, ApiKeyOnly, CurrentPrincipal, RequirePermission } from '../../auth/auth.decorators';
import { Principal } from '../../auth/principal';
import { CLOCK, Clock } from '../../common/clock';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import { Permission } from '../../auth/permission';
import { CONFIG_CACHE_CONTROL, ConfigPayload } from '../config-payload';
import { RateLimit } from '../../rate-limit/rate-limit.guard';
import { RateLimitBudget } from '../../rate-limit/rate-limiter';
import { ifNoneMatches } from '../flag-config-poll';
import { FlagConfigCache } from '../flag-config.cache';
import { CONFIG_STREAM_PATH } from '../stream/config-stream.controller';
import { STREAM_TOKENS, StreamTokens } from '../stream/stream-token';
import { bulkEtag, bulkFlagsJson, evaluationContext, evaluationOf, flagNotFound, OfrepEvaluation, payloadEntry } from './ofrep-evaluation';
import { EvaluationContext } from '../../flags/targeting/evaluate-flag';
import { ApiJsonBody } from '../../common/decorators/api-json-body.decorator';
import { OFREP_BULK_EXAMPLE, OFREP_EVALUATION_EXAMPLE, OFREP_REQUEST_EXAMPLES } from '../dto/config.examples';
import { OfrepBulkEvaluationDto, OfrepErrorDto, OfrepEvaluationDto, OfrepEvaluationRequestDto } from './ofrep.dto';

/** OFREP's root, at the root of PUBLIC_URL (outside base_url) as the protocol defines it. */
export const OFREP_ROOT = 'ofrep';
/** The route prefix of OFREP's evaluations. */
export const OFREP_ROUTE = `${OFREP_ROOT}/v1/evaluate/flags`;
/** How long a browser may leave a stream idle before closing it (OFREP's inactivityDelaySec). */
const INACTIVITY_DELAY_SECONDS = 120;

const VALIDATOR_HEADERS = {
  ETag: {
    description:
      'W/"<hash>": the same validator as GET /v1/flags/config for the same flags while no flag has rules; otherwise a hash of that and the request\'s context',
    schema: { type: 'string' },
  },
  'Cache-Control': { description: CONFIG_CACHE_CONTROL, schema: { type: 'string' } },
};
const RATE_LIMITED = 'RATE_LIMITED: past CONFIG_RATE_LIMIT_PER_MINUTE requests this minute with this key (the budget of the config poll, shared)';

/**
 * The OpenFeature Remote Evaluation Protocol over the config poll's own payload cache, ETag and rate limiter,
 * so that stock OpenFeature providers (Node, web, Go, .NET, Java) read the flags. Each flag evaluates for the request's
 * context through the service's one evaluator (flags/targeting): STATIC without rules, else the matching rule's value
 * (TARGETING_MATCH or SPLIT, variant its id) or the default (DEFAULT), with its type and runtime as metadata.
 */
@ApiTags('ofrep')
// Outside base_url: game servers' keys only, never a person's session.
@ApiKeyOnly()
@Controller(OFREP_ROUTE)
export class OfrepController {
  constructor(
    private readonly cache: FlagConfigCache,
    @Inject(STREAM_TOKENS) private readonly tokens: StreamTokens,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  @Post()
  @HttpCode(HttpStatus.OK)
  @RequirePermission(Permission.FLAGS_READ, { type: OfrepErrorDto, rateLimited: RATE_LIMITED })
  @AcceptsApiKeyHeader()
  @RateLimit(RateLimitBudget.CONFIG)
  @ApiOperation({
    summary: 'OFREP bulk evaluation: every flag of the config payload, for the context',
    description:
      'Each flag evaluates for the context as on the single route. Send the last ETag in If-None-Match for 304 when nothing ' +
      'changed (with rules, the ETag also covers the context). flagConfigEtag and flagConfigLastModified (sent by ' +
      'providers after a stream event) are accepted and change nothing. With the change stream on, eventStreams names it.',
  })
  @ApiJsonBody(OfrepEvaluationRequestDto, OFREP_REQUEST_EXAMPLES)
  @ApiHeader({ name: 'If-None-Match', required: false, description: 'A previously received ETag' })
  @ApiQuery({ name: 'flagConfigEtag', required: false, description: 'OFREP stream metadata; ignored' })
  @ApiQuery({ name: 'flagConfigLastModified', required: false, description: 'OFREP stream metadata; ignored' })
  @ApiOkResponse({ type: OfrepBulkEvaluationDto, headers: VALIDATOR_HEADERS, example: OFREP_BULK_EXAMPLE })
  @ApiNotModifiedResponse({ description: 'The flags are unchanged; empty body', headers: VALIDATOR_HEADERS })
  @ApiBadRequestResponse({ type: OfrepErrorDto, description: 'INVALID_CONTEXT: context is not a JSON object; PARSE_ERROR: the body is not JSON' })
  async bulk(
    @CurrentPrincipal() principal: Principal,
    @Body() body: unknown,
    @Req() request: Request,
    @Res() response: ServerResponse,
  ): Promise<void> {
    const context = evaluationContext(body);
    const payload = await this.cache.get(principal.organizationId);
    const etag = bulkEtag(payload, context);
    const etagHeader = etag === payload.etag ? payload.etagHeader : `W/"${etag}"`;
    if (ifNoneMatches(request, etag, etagHeader)) {
      response.writeHead(304, { ETag: etagHeader, 'Cache-Control': CONFIG_CACHE_CONTROL });
      response.end();
      return;
    }
    const json = this.bulkBody(principal, payload, context);
    response.writeHead(200, {
      'Content-Type': 'application/json; charset=utf-8',
      'Content-Length': Buffer.byteLength(json),
      ETag: etagHeader,
      'Cache-Control': CONFIG_CACHE_CONTROL,
    });
    response.end(json);
  }

  @Post(':key')
  @HttpCode(HttpStatus.OK)
  @RequirePermission(Permission.FLAGS_READ, { type: OfrepErrorDto, rateLimited: RATE_LIMITED })
  @AcceptsApiKeyHeader()
  @RateLimit(RateLimitBudget.CONFIG)
  @ApiOperation({
    summary: 'OFREP single evaluation: one flag of the config payload',
    description:
      'For OpenFeature providers that evaluate one flag at a time: the flag evaluates for the context, its type and runtime as ' +
      'metadata. Without rules: its value, STATIC, variant `default`. With rules: the first matching rule gives its value, ' +
      'TARGETING_MATCH (SPLIT when the rule has a percentage condition) and the rule id as variant; none matching, the flag value, ' +
      'DEFAULT, `default`. An archived or unknown key is 404 FLAG_NOT_FOUND. The context must be a JSON object. Authorised by ' +
      'the bearer key or X-API-Key (FLAGS_READ); counts against the config budget (CONFIG_RATE_LIMIT_PER_MINUTE).',
  })
  @ApiParam({ name: 'key', description: "The flag's key" })
  @ApiJsonBody(OfrepEvaluationRequestDto, OFREP_REQUEST_EXAMPLES)
  @ApiOkResponse({ type: OfrepEvaluationDto, example: OFREP_EVALUATION_EXAMPLE })
  @ApiBadRequestResponse({ type: OfrepErrorDto, description: 'INVALID_CONTEXT: context is not a JSON object; PARSE_ERROR: the body is not JSON' })
  @ApiNotFoundResponse({ type: OfrepErrorDto, description: 'FLAG_NOT_FOUND: no such flag, or it is archived' })
  async single(@CurrentPrincipal() principal: Principal, @Param('key') key: string, @Body() body: unknown): Promise<OfrepEvaluation> {
    const context = evaluationContext(body);
    const entry = payloadEntry(await this.cache.get(principal.organizationId), key);
    if (!entry) throw flagNotFound(key);
    return evaluationOf(entry, context);
  }

  /**
   * The flags evaluated for the context (serialised once per payload while no flag has rules), and this key's stream
   * (its token is per key, so it is added per request).
   */
  private bulkBody(principal: Principal, payload: ConfigPayload, context: EvaluationContext): string {
    const flagsJson = bulkFlagsJson(payload, context);
    if (!this.config.streamsEnabled) return `{"flags":${flagsJson}}`;
    const token = this.tokens.sign(principal.organizationId, principal.id, this.clock.now());
    const url = `${this.config.urls.publicUrl}${CONFIG_STREAM_PATH}?token=${token}`;
    return `{"flags":${flagsJson},"eventStreams":${JSON.stringify([{ type: 'sse', url, inactivityDelaySec: INACTIVITY_DELAY_SECONDS }])}}`;
  }
}
