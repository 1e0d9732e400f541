import { Module } from '@nestjs/common';
import { DiscoveryModule } from '@nestjs/core';
import { AuditModule } from '../audit/audit.module';
import { OrganizationsModule } from '../organizations/organizations.module';
import { QuotaModule } from '../quota/quota.module';
import { AuditController } from './flag-audit.controller';
import { FlagWriteInterceptor, FlagWriteRoutesCheck } from './flag-write.interceptor';
import { FlagWriter } from './flag-writer';
import { FlagsController } from './flags.controller';
import { FlagsRepository } from './flags.repository';
import { FlagsService } from './flags.service';

@Module({
  imports: [DiscoveryModule, OrganizationsModule, QuotaModule, AuditModule],
  // /flags/audit is registered before /flags/:flagId, so the literal route wins.
  controllers: [AuditController, FlagsController],
  providers: [FlagsRepository, FlagsService, FlagWriter, FlagWriteInterceptor, FlagWriteRoutesCheck],
  exports: [FlagsRepository, FlagsService, FlagWriter],
})
export class FlagsModule {}
