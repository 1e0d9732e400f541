import { Injectable, Optional } from '@nestjs/common';
import { Counter } from 'prom-client';
import { Metrics } from '../metrics/metrics';

/** The upload host's series, in the app's registry. */
@Injectable()
export class StorageMetrics {
  readonly uploadBytes: Counter;
  readonly uploadFailures: Counter<'code'>;

  constructor(@Optional() metrics?: Metrics) {
    const registers = metrics ? [metrics.registry] : [];
    this.uploadBytes = new Counter({ name: 'flagstore_upload_bytes_total', help: 'Bytes of uploads stored (completed uploads only)', registers });
    this.uploadFailures = new Counter({
      name: 'flagstore_upload_failures_total',
      help: 'Uploads that failed, by error code',
      labelNames: ['code'] as const,
      registers,
    });
  }
}
