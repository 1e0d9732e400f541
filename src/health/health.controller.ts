import { Controller, Get, Header, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { Public } from '../http/access';
import { HealthCheckResultDto, LegacyHealthDto } from './health.dto';
import { HealthChecks } from './readiness';

const NO_CACHE = 'no-cache, no-store, must-revalidate';
const NOT_READY =
  'A check failed or timed out (each has 2 s): `error` names it, down. Why it failed (which may name paths, hosts and ports) is in the service log, not in this public answer';

/** Health's routes, at the root of PUBLIC_URL. */
export const HEALTH_ROUTE = 'health';

@ApiTags('health')
@Public()
@Controller(HEALTH_ROUTE)
export class HealthController {
  constructor(private readonly checks: HealthChecks) {}

  @Get()
  @Header('Cache-Control', NO_CACHE)
  @ApiOperation({
    summary: 'Readiness, as GET /health/ready, answered in the original body when ready',
    description:
      'Kept for probes written against the first release: 200 `{status: "ok", database: "up"}` when ready, otherwise what /health/ready answers.',
  })
  @ApiOkResponse({ type: LegacyHealthDto, example: { status: 'ok', database: 'up' } })
  @ApiServiceUnavailableResponse({ type: HealthCheckResultDto, description: NOT_READY })
  async check(@Res({ passthrough: true }) response: Response): Promise<LegacyHealthDto | HealthCheckResultDto> {
    const { ready, result } = await this.checks.ready();
    if (ready) return { status: 'ok', database: 'up' };
    response.status(503);
    return result as HealthCheckResultDto;
  }

  @Get('live')
  @Header('Cache-Control', NO_CACHE)
  @ApiOperation({
    summary: 'Liveness: the process answers (no dependency is checked)',
    description:
      'For a liveness probe: a failure means the process should be restarted. It stays 200 while the database is away, so an outage never restarts every instance.',
  })
  @ApiOkResponse({ type: HealthCheckResultDto, example: { status: 'ok', info: {}, error: {}, details: {} } })
  async live(): Promise<HealthCheckResultDto> {
    return (await this.checks.live()) as HealthCheckResultDto;
  }

  @Get('ready')
  @Header('Cache-Control', NO_CACHE)
  @ApiOperation({
    summary: 'Readiness: the database answers and is migrated; Redis (REDIS_URL) and the object store answer',
    description: 'For a readiness probe or a load balancer: 503 while a dependency is down, so traffic goes to other instances until it returns.',
  })
  @ApiOkResponse({
    type: HealthCheckResultDto,
    example: {
      status: 'ok',
      info: { database: { status: 'up' }, migrations: { status: 'up' } },
      error: {},
      details: { database: { status: 'up' }, migrations: { status: 'up' } },
    },
  })
  @ApiServiceUnavailableResponse({ type: HealthCheckResultDto, description: NOT_READY })
  async ready(@Res({ passthrough: true }) response: Response): Promise<HealthCheckResultDto> {
    const { ready, result } = await this.checks.ready();
    if (!ready) response.status(503);
    return result as HealthCheckResultDto;
  }
}
