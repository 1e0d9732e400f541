import { Module } from '@nestjs/common';
import { join } from 'node:path';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { OrganizationsModule } from '../organizations/organizations.module';
import { CdnController } from './cdn.controller';
import { CdnService } from './cdn.service';
import { LocalObjectStore } from './object-store/local-object-store';
import { OBJECT_STORE, ObjectStore } from './object-store/object-store';
import { S3ObjectStore } from './object-store/s3-object-store';
import { StorageController } from './storage.controller';
import { StorageRepository } from './storage.repository';
import { StorageService } from './storage.service';
import { StorageSweeper } from './storage-sweeper';
import { StorageUrls } from './storage-urls';
import { UploadController } from './upload.controller';
import { UploadService } from './upload.service';
import { loadSigningSecret, UploadSigner } from './upload-signer';

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
  imports: [OrganizationsModule],
  controllers: [StorageController, UploadController, CdnController],
  providers: [
    { provide: OBJECT_STORE, useFactory: createObjectStore, inject: [APP_CONFIG] },
    {
      provide: UploadSigner,
      useFactory: async (config: AppConfig) => new UploadSigner(await loadSigningSecret(config.uploadSigningSecret, config.dataDir)),
      inject: [APP_CONFIG],
    },
    StorageRepository,
    StorageUrls,
    StorageService,
    UploadService,
    CdnService,
    StorageSweeper,
  ],
  exports: [StorageSweeper, OBJECT_STORE],
})
export class StorageModule {}
