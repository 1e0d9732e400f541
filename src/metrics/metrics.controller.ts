import { createHash, timingSafeEqual } from 'node:crypto';
import { Controller, Get, Header, Headers, Inject, Res, UnauthorizedException } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiOperation, ApiTags, ApiUnauthorizedResponse } from '@nestjs/swagger';
import type { Response } from 'express';
import { Public } from '../http/access';
import { ApiErrorDto } from '../common/dto/api-error.dto';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { Metrics } from './metrics';

/** The scrape route, at the root of PUBLIC_URL. */
export const METRICS_ROUTE = 'metrics';

/** The OpenAPI security scheme of the scrape route: `Authorization: Bearer <METRICS_TOKEN>`. */
export const METRICS_SECURITY = 'metricsToken';

/**
 * GET /metrics on the public listener: registered only when METRICS_TOKEN is set (MetricsModule), and then only
 * for a request that carries it. Without METRICS_TOKEN the public listener has no such route; METRICS_PORT serves
 * the metrics on an internal listener instead (MetricsListener).
 */
@ApiTags('metrics')
@Public()
@Controller(METRICS_ROUTE)
export class MetricsController {
  private readonly tokenDigest: Buffer;

  constructor(
    private readonly metrics: Metrics,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    if (config.metricsToken === undefined) throw new Error('MetricsController is registered only when METRICS_TOKEN is set');
    this.tokenDigest = digest(config.metricsToken);
  }

  @Get()
  @Header('Cache-Control', 'no-store')
  @ApiBearerAuth(METRICS_SECURITY)
  @ApiOperation({
    summary: 'Prometheus metrics (text exposition format)',
    description:
      'Served on this (public) listener only because METRICS_TOKEN is set: send `Authorization: Bearer <METRICS_TOKEN>`. ' +
      'Without METRICS_TOKEN this route does not exist here (404). METRICS_PORT serves the same metrics, without a token, ' +
      'on a second listener meant to stay internal.',
  })
  @ApiOkResponse({ description: 'The metrics, in Prometheus text format 0.0.4', content: { 'text/plain': { schema: { type: 'string' } } } })
  @ApiUnauthorizedResponse({ type: ApiErrorDto, description: 'The request does not carry METRICS_TOKEN as its bearer token' })
  async scrape(@Headers('authorization') authorization: string | undefined, @Res({ passthrough: true }) response: Response): Promise<string> {
    if (!this.authorized(authorization)) throw new UnauthorizedException('Send Authorization: Bearer <METRICS_TOKEN>');
    response.setHeader('Content-Type', this.metrics.registry.contentType);
    return this.metrics.registry.metrics();
  }

  /** Constant-time: both sides are hashed to one length before comparing. */
  private authorized(authorization: string | undefined): boolean {
    const match = /^Bearer (.+)$/i.exec(authorization ?? '');
    return match !== null && timingSafeEqual(digest(match[1]), this.tokenDigest);
  }
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}
