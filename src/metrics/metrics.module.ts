import { DynamicModule, Global, Module } from '@nestjs/common';
import { AppConfig } from '../config/app-config';
import { MetricsController } from './metrics.controller';
import { MetricsListener } from './metrics-listener';
import { Metrics } from './metrics';

/**
 * The Metrics every module counts into (global: any provider may inject it), and where they are scraped: GET /metrics
 * on the public listener only with METRICS_TOKEN (without it the route does not exist there), and on the internal
 * listener of METRICS_PORT when that is set.
 */
@Global()
@Module({})
export class MetricsModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: MetricsModule,
      controllers: config.metricsToken === undefined ? [] : [MetricsController],
      providers: [Metrics, MetricsListener],
      exports: [Metrics],
    };
  }
}
