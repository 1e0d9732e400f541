import { ApiProperty, ApiPropertyOptions } from '@nestjs/swagger';

/** One entry per check (database, migrations, redis, objectStore), as terminus reports it. */
function indicators(description: string, required = true): ApiPropertyOptions {
  const options = {
    type: 'object',
    required,
    description,
    additionalProperties: {
      type: 'object',
      required: ['status'],
      properties: {
        status: { type: 'string', enum: ['up', 'down'] },
        responseTime: { type: 'integer', description: 'Milliseconds the check took' },
        message: { type: 'string', description: 'Why the check failed (a timeout says so)' },
      },
    },
  };
  return options as ApiPropertyOptions;
}

/** What @nestjs/terminus answers: the overall status and each check's. */
export class HealthCheckResultDto {
  @ApiProperty({ enum: ['ok', 'error', 'shutting_down'], example: 'ok' }) status: 'ok' | 'error' | 'shutting_down';
  @ApiProperty(indicators('The checks that are up', false)) info?: Record<string, object>;
  @ApiProperty(indicators('The checks that are down', false)) error?: Record<string, object>;
  @ApiProperty(indicators('Every check: `status` up or down, the milliseconds it took, why it failed')) details: Record<string, object>;
}

/** GET /health's answer when ready, unchanged since before /health/ready existed. */
export class LegacyHealthDto {
  @ApiProperty({ example: 'ok' }) status: 'ok';
  @ApiProperty({ example: 'up' }) database: 'up';
}
