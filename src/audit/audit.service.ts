import { Injectable } from '@nestjs/common';
import { totalPages } from '../common/dto/pagination';
import { AuditPageDto, AuditQueryDto, FeatureFlagAuditEntryDto } from './dto/audit.dto';
import { AuditRepository } from './audit.repository';

@Injectable()
export class AuditService {
  constructor(private readonly audit: AuditRepository) {}

  async list(organizationId: string, query: AuditQueryDto): Promise<AuditPageDto> {
    const { entries, total } = await this.audit.list(organizationId, {
      flagId: query.flagId,
      offset: (query.page - 1) * query.limit,
      limit: query.limit,
    });
    return {
      results: entries.map(FeatureFlagAuditEntryDto.from),
      total,
      page: query.page,
      totalPages: totalPages(total, query.limit),
    };
  }
}
