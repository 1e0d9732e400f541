import { Global, Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { HealthController } from './health.controller';
import { HealthChecks } from './readiness';
import { ReadinessChecks } from './readiness-checks';

/**
 * GET /health/live, /health/ready and /health (readiness), with @nestjs/terminus. Global, so that any module
 * can register a readiness check of its own in ReadinessChecks.
 */
@Global()
@Module({
  // Failed checks are in the answer; a probe every few seconds must not log each one.
  imports: [TerminusModule.forRoot({ logger: false })],
  controllers: [HealthController],
  providers: [HealthChecks, ReadinessChecks],
  exports: [ReadinessChecks],
})
export class HealthModule {}
