import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AuditModule } from '../audit/audit.module';
import { OrganizationsModule } from '../organizations/organizations.module';
import { QuotaModule } from '../quota/quota.module';
import { FlagEntity } from './flag.entity';
import { FlagsController } from './flags.controller';
import { FlagsRepository } from './flags.repository';
import { FlagsService } from './flags.service';

@Module({
  imports: [TypeOrmModule.forFeature([FlagEntity]), OrganizationsModule, QuotaModule, AuditModule],
  controllers: [FlagsController],
  providers: [FlagsRepository, FlagsService],
  exports: [FlagsRepository],
})
export class FlagsModule {}
