import { ApiProperty, ApiPropertyOptions } from '@nestjs/swagger';

/**
 * One entry per check (database, migrations, redis, objectStore), as terminus reports it, with its status only:
 * why a check failed is in the service's log, never in this public answer.
 */
function indicators(description: string, required = true): ApiPropertyOptions {
  const options = {
    type: 'object',
    required,
    description,
    additionalProperties: {
      type: 'object',
      required: ['status'],
      additionalProperties: false,
      properties: { status: { type: 'string', enum: ['up', 'down'] } },
    },
    example: { database: { status: 'up' }, migrations: { status: 'up' }, objectStore: { status: 'up' } },
  };
  return options as ApiPropertyOptions;
}

/** What @nestjs/terminus answers: the overall status and each check's. */
export class HealthCheckResultDto {
  @ApiProperty({ enum: ['ok', 'error', 'shutting_down'], example: 'ok' }) status: 'ok' | 'error' | 'shutting_down';
  @ApiProperty(indicators('The checks that are up', false)) info?: Record<string, object>;
  @ApiProperty(indicators('The checks that are down', false)) error?: Record<string, object>;
  @ApiProperty(indicators('Every check, up or down (why one is down is logged, not answered)')) details: Record<string, object>;
}

/** GET /health's answer when ready, unchanged since before /health/ready existed. */
export class LegacyHealthDto {
  @ApiProperty({ example: 'ok' }) status: 'ok';
  @ApiProperty({ example: 'up' }) database: 'up';
}
