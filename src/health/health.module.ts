import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { StorageModule } from '../storage/storage.module';
import { HealthController } from './health.controller';
import { HealthChecks } from './readiness';

/** GET /health/live, /health/ready and /health (readiness), with @nestjs/terminus. */
@Module({
  // Failed checks are in the answer; a probe every few seconds must not log each one.
  imports: [TerminusModule.forRoot({ logger: false }), StorageModule],
  controllers: [HealthController],
  providers: [HealthChecks],
})
export class HealthModule {}
