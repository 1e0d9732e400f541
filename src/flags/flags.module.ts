import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { AuditModule } from '../audit/audit.module';
import { OrganizationsModule } from '../organizations/organizations.module';
import { QuotaModule } from '../quota/quota.module';
import { ReviewSettingsModule } from '../review/review-settings.module';
import { AuditController } from './flag-audit.controller';
import { FlagTransferController } from './flag-transfer.controller';
import { FlagTransferService } from './flag-transfer.service';
import { FlagWriteInterceptor, FlagWriteRoutesCheck } from './flag-write.interceptor';
import { FlagWriter } from './flag-writer';
import { FlagsController } from './flags.controller';
import { FlagsRepository } from './flags.repository';
import { FlagsService } from './flags.service';
import { FlagScheduler } from './schedules/flag-scheduler';
import { FlagSchedulesController } from './schedules/flag-schedules.controller';
import { FlagSchedulesRepository } from './schedules/flag-schedules.repository';
import { FlagSchedulesService } from './schedules/flag-schedules.service';
import { WebhookEventsModule } from '../webhooks/webhook-events.module';

@Module({
  imports: [DiscoveryModule, OrganizationsModule, QuotaModule, AuditModule, ReviewSettingsModule, WebhookEventsModule],
  // /flags/audit and /flags/export are registered before /flags/:flagId, so the literal routes win.
  controllers: [AuditController, FlagTransferController, FlagsController, FlagSchedulesController],
  providers: [
    FlagsRepository,
    FlagsService,
    FlagTransferService,
    FlagWriter,
    FlagWriteInterceptor,
    FlagWriteRoutesCheck,
    FlagSchedulesRepository,
    FlagSchedulesService,
    FlagScheduler,
  ],
  exports: [FlagsRepository, FlagsService, FlagWriter, FlagSchedulesRepository, FlagTransferService],
})
export class FlagsModule {}
