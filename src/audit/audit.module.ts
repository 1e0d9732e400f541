import { Module } from '@nestjs/common';
import { AuditRepository } from './audit.repository';

/** The append-only log of changes. It depends on nothing but the database; its subjects write to it. */
@Module({
  providers: [AuditRepository],
  exports: [AuditRepository],
})
export class AuditModule {}
