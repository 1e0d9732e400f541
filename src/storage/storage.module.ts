import { Inject, Module, Optional } from '@nestjs/common';
import { join } from 'node:path';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { SIGNING_SECRET } from '../config/signing-secret';
import { ReadinessChecks } from '../health/readiness-checks';
import { OrganizationsModule } from '../organizations/organizations.module';
import { CdnController } from './cdn/cdn.controller';
import { CdnService } from './cdn/cdn.service';
import { StorageAllocation } from './items/storage-allocation';
import { StorageController } from './items/storage.controller';
import { StorageRepository } from './items/storage.repository';
import { StorageService } from './items/storage.service';
import { LocalObjectStore } from './object-store/local-object-store';
import { OBJECT_STORE, ObjectStore } from './object-store/object-store';
import { S3ObjectStore } from './object-store/s3-object-store';
import { SignedUrls } from './signed-urls/signed-urls';
import { UploadController } from './signed-urls/upload.controller';
import { UploadService } from './signed-urls/upload.service';
import { StorageMetrics } from './storage.metrics';
import { StorageSweeper } from './sweeper/storage-sweeper';
import { WebhookEventsModule } from '../webhooks/webhook-events.module';

/** S3 when S3_* is configured, otherwise local disk under DATA_DIR. */
async function createObjectStore(config: AppConfig): Promise<ObjectStore> {
  if (config.s3) {
    const store = new S3ObjectStore(config.s3, join(config.dataDir, 'upload-spool'));
    await store.init();
    return store;
  }
  const store = new LocalObjectStore(join(config.dataDir, 'objects'));
  await store.init();
  return store;
}

/** File storage: signed uploads, the upload host, the CDN route, listing, statistics, delete and purge. */
@Module({
  imports: [OrganizationsModule, WebhookEventsModule],
  controllers: [StorageController, UploadController, CdnController],
  providers: [
    { provide: OBJECT_STORE, useFactory: createObjectStore, inject: [APP_CONFIG] },
    {
      provide: SignedUrls,
      useFactory: (config: AppConfig, secret: Buffer) => new SignedUrls(secret, config.urls.uploadUrl),
      inject: [APP_CONFIG, SIGNING_SECRET],
    },
    StorageMetrics,
    StorageRepository,
    StorageAllocation,
    StorageService,
    UploadService,
    CdnService,
    StorageSweeper,
  ],
  exports: [StorageSweeper, OBJECT_STORE],
})
export class StorageModule {
  /** Readiness includes the object store (absent from apps without health, such as the CLI's). */
  constructor(@Inject(OBJECT_STORE) store: ObjectStore, @Optional() readiness?: ReadinessChecks) {
    readiness?.register('objectStore', () => store.checkUsable());
  }
}
