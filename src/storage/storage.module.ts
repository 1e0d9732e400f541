import { Module } from '@nestjs/common';

/** File storage: signed uploads, the upload host, the CDN route, listing, statistics, delete and purge. */
@Module({})
export class StorageModule {}
