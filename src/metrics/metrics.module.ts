import { Global, Module } from '@nestjs/common';
import { MetricsController } from './metrics.controller';
import { Metrics } from './metrics';

/** GET /metrics and the Metrics every module counts into (global: any provider may inject it). */
@Global()
@Module({ controllers: [MetricsController], providers: [Metrics], exports: [Metrics] })
export class MetricsModule {}
