import { createHash, timingSafeEqual } from 'node:crypto';
import { Controller, Get, Header, Headers, Inject, Res, UnauthorizedException } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags, ApiUnauthorizedResponse } from '@nestjs/swagger';
import type { Response } from 'express';
import { Public } from '../http/access';
import { ApiErrorDto } from '../common/dto/api-error.dto';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { Metrics } from './metrics';

/** The scrape route, at the root of PUBLIC_URL. */
export const METRICS_ROUTE = 'metrics';

@ApiTags('metrics')
@Public()
@Controller(METRICS_ROUTE)
export class MetricsController {
  private readonly tokenDigest?: Buffer;

  constructor(
    private readonly metrics: Metrics,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.tokenDigest = config.metricsToken === undefined ? undefined : digest(config.metricsToken);
  }

  @Get()
  @Header('Cache-Control', 'no-store')
  @ApiOperation({
    summary: 'Prometheus metrics (text exposition format)',
    description:
      'With METRICS_TOKEN set, send `Authorization: Bearer <METRICS_TOKEN>`; without it the route is open (scrape it on a private network).',
  })
  @ApiOkResponse({ description: 'The metrics, in Prometheus text format 0.0.4', content: { 'text/plain': { schema: { type: 'string' } } } })
  @ApiUnauthorizedResponse({ type: ApiErrorDto, description: 'METRICS_TOKEN is set and the request does not carry it' })
  async scrape(@Headers('authorization') authorization: string | undefined, @Res({ passthrough: true }) response: Response): Promise<string> {
    if (this.tokenDigest && !this.authorized(authorization)) throw new UnauthorizedException('Send Authorization: Bearer <METRICS_TOKEN>');
    response.setHeader('Content-Type', this.metrics.registry.contentType);
    return this.metrics.registry.metrics();
  }

  /** Constant-time: both sides are hashed to one length before comparing. */
  private authorized(authorization: string | undefined): boolean {
    const match = /^Bearer (.+)$/i.exec(authorization ?? '');
    return match !== null && timingSafeEqual(digest(match[1]), this.tokenDigest!);
  }
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}
