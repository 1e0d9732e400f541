import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { AdminController } from './admin.controller';
import { ApiKeyEntity } from './api-key.entity';
import { OrganizationEntity } from './organization.entity';
import { OrganizationsRepository } from './organizations.repository';
import { OrganizationsService } from './organizations.service';
import { SubscriptionEntity } from './subscription.entity';

@Module({
  imports: [TypeOrmModule.forFeature([OrganizationEntity, ApiKeyEntity, SubscriptionEntity])],
  controllers: [AdminController],
  providers: [OrganizationsRepository, OrganizationsService],
  exports: [OrganizationsRepository, OrganizationsService],
})
export class OrganizationsModule {}
