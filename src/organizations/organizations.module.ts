import { Module } from '@nestjs/common';
import { ApiKeysModule } from '../auth/api-keys.module';
import { QuotaModule } from '../quota/quota.module';
import { AdminController } from './admin.controller';
import { OrganizationsRepository } from './organizations.repository';
import { OrganizationsService } from './organizations.service';

@Module({
  imports: [ApiKeysModule, QuotaModule],
  controllers: [AdminController],
  providers: [OrganizationsRepository, OrganizationsService],
  exports: [OrganizationsRepository, OrganizationsService],
})
export class OrganizationsModule {}
