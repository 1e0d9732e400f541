import { Injectable } from '@nestjs/common';
import { changesBetween, FlagSnapshot } from '../audit/audit-action';
import { AuditRecorder } from '../audit/audit-recorder';
import { totalPages } from '../common/dto/pagination';
import { OrganizationsRepository } from '../organizations/organizations.repository';
import { QuotaService } from '../quota/quota.service';
import { CreateFlagDto, UpdateFlagDto } from './dto/flag-input.dto';
import { FeatureFlagDto, FlagPageDto, ListFlagsQueryDto } from './dto/flag.dto';
import { FlagsErrors } from './flags.errors';
import { FlagsRepository, snapshotOf } from './flags.repository';

/**
 * Flag rules. Writes run inside the transaction the AuditInterceptor opened for the request, take the
 * organization's row lock first (so the allowance and lock state cannot change underneath them), and
 * record their before/after state for the audit log.
 */
@Injectable()
export class FlagsService {
  constructor(
    private readonly flags: FlagsRepository,
    private readonly organizations: OrganizationsRepository,
    private readonly quota: QuotaService,
    private readonly audit: AuditRecorder,
  ) {}

  async create(organizationId: string, dto: CreateFlagDto): Promise<FeatureFlagDto> {
    await this.organizations.lockOrganization(organizationId);
    const { max, used } = await this.quota.quotaFor(organizationId);
    if (used >= max) throw FlagsErrors.allowanceReached(max);

    const state: FlagSnapshot = {
      name: dto.name,
      description: dto.description ?? null,
      type: dto.type,
      value: dto.value,
      runtime: dto.runtime ?? 'shared',
      archived: false,
    };
    const row = await this.flags.insert(organizationId, { key: dto.key, ...state });
    if (!row) throw FlagsErrors.keyTaken(dto.key);
    this.audit.record({ organizationId, flagId: row.id, flagKey: row.key, before: null, after: state });
    return FeatureFlagDto.from(row, false);
  }

  async list(organizationId: string, query: ListFlagsQueryDto): Promise<FlagPageDto> {
    const [{ rows, total }, { quota, lockedFlagIds }] = await Promise.all([
      this.flags.list(organizationId, {
        search: query.search,
        includeArchived: query.includeArchived,
        offset: (query.page - 1) * query.limit,
        limit: query.limit,
      }),
      this.quota.snapshot(organizationId),
    ]);
    return {
      results: rows.map((row) => FeatureFlagDto.from(row, lockedFlagIds.has(row.id))),
      quota,
      total,
      page: query.page,
      totalPages: totalPages(total, query.limit),
    };
  }

  async get(organizationId: string, flagId: string): Promise<FeatureFlagDto> {
    const row = await this.flags.findById(organizationId, flagId);
    if (!row) throw FlagsErrors.notFound(flagId);
    return FeatureFlagDto.from(row, await this.isLocked(organizationId, row.id));
  }

  async update(organizationId: string, flagId: string, dto: UpdateFlagDto): Promise<FeatureFlagDto> {
    await this.organizations.lockOrganization(organizationId);
    const current = await this.flags.findById(organizationId, flagId, { lock: true });
    if (!current) throw FlagsErrors.notFound(flagId);
    const before = snapshotOf(current);
    const after: FlagSnapshot = {
      name: dto.name ?? before.name,
      description: dto.description === undefined ? before.description : dto.description,
      type: dto.type ?? before.type,
      value: dto.value === undefined ? before.value : dto.value,
      runtime: dto.runtime ?? before.runtime,
      archived: dto.archived ?? before.archived,
    };

    const locked = await this.isLocked(organizationId, flagId);
    const changes = changesBetween(before, after);
    // Archiving and restoring stay allowed on a locked flag; every other edit is refused.
    if (locked && (changes.value || changes.runtime || changes.details)) throw FlagsErrors.locked(current.key);
    // A value may change on an active flag, or in the same request that restores it.
    if (changes.value && before.archived && after.archived) throw FlagsErrors.archivedValueChange(current.key);

    if (!this.audit.record({ organizationId, flagId, flagKey: current.key, before, after })) {
      return FeatureFlagDto.from(current, locked);
    }
    const row = await this.flags.update(organizationId, flagId, after);
    return FeatureFlagDto.from(row, locked);
  }

  async delete(organizationId: string, flagId: string): Promise<void> {
    await this.organizations.lockOrganization(organizationId);
    const current = await this.flags.findById(organizationId, flagId, { lock: true });
    if (!current) throw FlagsErrors.notFound(flagId);
    // The flag's earlier entries lose their flagId through ON DELETE SET NULL; this one never has one.
    this.audit.record({ organizationId, flagId: null, flagKey: current.key, before: snapshotOf(current), after: null });
    await this.flags.delete(organizationId, flagId);
  }

  private async isLocked(organizationId: string, flagId: string): Promise<boolean> {
    const { lockedFlagIds } = await this.quota.snapshot(organizationId);
    return lockedFlagIds.has(flagId);
  }
}
