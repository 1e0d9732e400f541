import { Injectable } from '@nestjs/common';
import { AuditRepository } from '../audit/audit.repository';
import { pageWindow, totalPages } from '../common/dto/pagination';
import { Db, Sql, Transaction } from '../database/sql';
import { OrganizationsErrors } from '../organizations/organizations.errors';
import { OrganizationsRepository } from '../organizations/organizations.repository';
import { QuotaService } from '../quota/quota.service';
import { AuditFilterDto, auditFilterOf, AuditPageDto, AuditQueryDto, FeatureFlagAuditEntryDto } from './dto/flag-audit.dto';
import { CreateFlagDto, UpdateFlagDto } from './dto/flag-input.dto';
import { FeatureFlagDto, FlagPageDto, ListFlagsQueryDto } from './dto/flag.dto';
import { editBetween, flagChange, FlagSnapshot, FlagType, snapshotOf, withRules } from './flag.model';
import { FlagRule, flagRulesError } from './targeting/flag-rules';
import { evaluateFlag, EvaluationContext } from './targeting/evaluate-flag';
import { FlagEvaluationDto } from './dto/flag-evaluation.dto';
import { FlagWrite } from './flag-writer';
import { IfMatch, ifMatchHolds, Versioned } from './flag-version';
import { FlagsErrors } from './flags.errors';
import { FlagsRepository } from './flags.repository';
import { FlagSchedulesRepository } from './schedules/flag-schedules.repository';

/**
 * Flag rules. A write method runs in the transaction it is given (FlagWriter's) and answers a FlagWrite: what it
 * changed, for FlagWriter to audit in that transaction. Each takes the organization's row lock first, so the
 * allowance and lock state cannot change underneath it, and the lock order is always organization row, then flag
 * row. Reads run on autocommit (`this.sql`).
 */
@Injectable()
export class FlagsService {
  constructor(
    private readonly sql: Sql,
    private readonly flags: FlagsRepository,
    private readonly organizations: OrganizationsRepository,
    private readonly quota: QuotaService,
    private readonly audit: AuditRepository,
    private readonly schedules: FlagSchedulesRepository,
  ) {}

  async create(tx: Transaction, organizationId: string, dto: CreateFlagDto): Promise<FlagWrite<FeatureFlagDto>> {
    if (!(await this.organizations.lockOrganization(tx, organizationId))) throw OrganizationsErrors.organizationDeleted();
    const { quota, allowance } = await this.quota.use(tx, organizationId);
    if (quota.used >= quota.max) throw FlagsErrors.allowanceReached(allowance);

    const state: FlagSnapshot = withRules(
      { name: dto.name, description: dto.description ?? null, type: dto.type, value: dto.value, runtime: dto.runtime ?? 'shared', archived: false },
      dto.rules,
    );
    const flag = await this.flags.insert(tx, organizationId, { key: dto.key, ...state });
    if (!flag) throw FlagsErrors.keyTaken(dto.key);
    return new FlagWrite(FeatureFlagDto.from(flag, false), flagChange(organizationId, flag.id, flag.key, null, state), flag.version);
  }

  async list(organizationId: string, query: ListFlagsQueryDto): Promise<FlagPageDto> {
    const [{ rows, total }, use] = await Promise.all([
      this.flags.list(this.sql, organizationId, {
        search: query.search,
        includeArchived: query.includeArchived,
        ...pageWindow(query),
      }),
      this.quota.use(this.sql, organizationId),
    ]);
    // Only this page's flags are ranked against the allowance: a page costs the same with 10,000 flags locked or none.
    const lockedFlagIds = await this.quota.lockedOf(
      this.sql,
      organizationId,
      use,
      rows.map((flag) => flag.id),
    );
    const { quota } = use;
    return {
      results: rows.map((flag) => FeatureFlagDto.from(flag, lockedFlagIds.has(flag.id))),
      quota,
      total,
      page: query.page,
      totalPages: totalPages(total, query.limit),
    };
  }

  async get(organizationId: string, flagId: string): Promise<FeatureFlagDto> {
    return (await this.read(organizationId, flagId)).body;
  }

  /** The flag and its row version (its ETag). */
  async read(organizationId: string, flagId: string): Promise<Versioned<FeatureFlagDto>> {
    const flag = await this.flags.findById(this.sql, organizationId, flagId);
    if (!flag) throw FlagsErrors.notFound(flagId);
    return new Versioned(FeatureFlagDto.from(flag, await this.isLocked(this.sql, organizationId, flag.id)), flag.version);
  }

  /** What the flag, as stored, gives for `context` (the evaluator OFREP and the SDK use). */
  async evaluate(organizationId: string, flagId: string, context: EvaluationContext): Promise<FlagEvaluationDto> {
    const flag = await this.flags.findById(this.sql, organizationId, flagId);
    if (!flag) throw FlagsErrors.notFound(flagId);
    return evaluateFlag(flag, context);
  }

  /**
   * Applies what the body sends; a body that changes nothing writes nothing and reports no change. `ifMatch`, checked
   * under the flag's row lock, refuses the write (412) when the flag is no longer at a version it names.
   */
  async update(tx: Transaction, organizationId: string, flagId: string, dto: UpdateFlagDto, ifMatch?: IfMatch): Promise<FlagWrite<FeatureFlagDto>> {
    await this.organizations.lockOrganization(tx, organizationId);
    const current = await this.flags.findForUpdate(tx, organizationId, flagId);
    if (!current) throw FlagsErrors.notFound(flagId);
    if (!ifMatchHolds(ifMatch, current.version)) throw FlagsErrors.changed(current.key, current.version);
    const before = snapshotOf(current);
    const after: FlagSnapshot = withRules(
      {
        name: dto.name ?? before.name,
        description: dto.description === undefined ? before.description : dto.description,
        type: dto.type ?? before.type,
        value: dto.value === undefined ? before.value : dto.value,
        runtime: dto.runtime ?? before.runtime,
        archived: dto.archived ?? before.archived,
      },
      dto.rules === undefined ? before.rules : dto.rules,
    );
    checkRulesFitType(before, after.type, dto.rules);

    const { allowance, lockedFlagIds } = await this.quota.snapshot(tx, organizationId, [flagId]);
    const locked = lockedFlagIds.has(flagId);
    const edit = editBetween(before, after);
    // Archiving and restoring stay allowed on a locked flag; every other edit is refused.
    if (locked && (edit.value || edit.runtime || edit.details)) throw FlagsErrors.locked(current.key, allowance);
    // A value may change on an active flag, or in the same request that restores it.
    if (edit.value && before.archived && after.archived) throw FlagsErrors.archivedValueChange(current.key);

    const change = flagChange(organizationId, flagId, current.key, before, after);
    if (!change) return new FlagWrite(FeatureFlagDto.from(current, locked), null, current.version);
    const updated = await this.flags.update(tx, organizationId, flagId, after);
    return new FlagWrite(FeatureFlagDto.from(updated, locked), change, updated.version);
  }

  /**
   * Sets name, description, type, value, runtime, archived and rules to what an audit entry of this flag recorded
   * after its change (no rules when it has none): an ordinary edit (PATCH's rules and labels; restoring the current
   * state writes nothing). Its audit entry names the entry it went back to (`context.restoredFrom`).
   */
  async restore(
    tx: Transaction,
    organizationId: string,
    flagId: string,
    auditEntryId: string,
    ifMatch?: IfMatch,
  ): Promise<FlagWrite<FeatureFlagDto>> {
    const state = await this.audit.afterState(tx, organizationId, flagId, auditEntryId);
    if (!state) {
      if (!(await this.flags.findById(tx, organizationId, flagId))) throw FlagsErrors.notFound(flagId);
      throw FlagsErrors.notRestorable(auditEntryId);
    }
    const { name, description, type, value, runtime, archived, rules } = state as FlagSnapshot;
    const write = await this.update(tx, organizationId, flagId, { name, description, type, value, runtime, archived, rules: rules ?? [] }, ifMatch);
    return write.because({ restoredFrom: auditEntryId });
  }

  async delete(tx: Transaction, organizationId: string, flagId: string, ifMatch?: IfMatch): Promise<FlagWrite<void>> {
    await this.organizations.lockOrganization(tx, organizationId);
    const current = await this.flags.findForUpdate(tx, organizationId, flagId);
    if (!current) throw FlagsErrors.notFound(flagId);
    if (!ifMatchHolds(ifMatch, current.version)) throw FlagsErrors.changed(current.key, current.version);
    await this.flags.delete(tx, organizationId, flagId);
    await this.schedules.failPendingOfFlag(tx, organizationId, flagId, `Flag "${current.key}" was deleted`);
    // The flag's earlier entries lose their flagId through ON DELETE SET NULL; this one never has one.
    return new FlagWrite(undefined, { ...flagChange(organizationId, null, current.key, snapshotOf(current), null)!, deletedFlagId: flagId });
  }

  /** The audit log of the organization's flags, filtered, newest first. */
  async history(organizationId: string, query: AuditQueryDto): Promise<AuditPageDto> {
    const { entries, total } = await this.audit.list(this.sql, organizationId, { ...auditFilterOf(query), ...pageWindow(query) });
    return AuditPageDto.from(entries, total, query);
  }

  /** The filtered audit log, oldest first, a batch at a time (AuditRepository.batches). */
  exportHistory(organizationId: string, query: AuditFilterDto): AsyncGenerator<FeatureFlagAuditEntryDto[]> {
    const batches = this.audit.batches(this.sql, organizationId, auditFilterOf(query));
    return (async function* () {
      for await (const batch of batches) yield batch.map(FeatureFlagAuditEntryDto.from);
    })();
  }

  private async isLocked(db: Db, organizationId: string, flagId: string): Promise<boolean> {
    const { lockedFlagIds } = await this.quota.snapshot(db, organizationId, [flagId]);
    return lockedFlagIds.has(flagId);
  }
}

/**
 * Rules sent without `type` were checked only for their shape: their values must fit the stored type. A type change
 * on a flag with rules must bring rules of the new type, or none.
 */
export function checkRulesFitType(current: FlagSnapshot, type: FlagType, rules: FlagRule[] | undefined): void {
  if (rules === undefined) {
    if (type !== current.type && current.rules) {
      throw FlagsErrors.invalid(
        `rules must be sent when type changes: the flag has rules, and their values must be of type ${type} ([] removes them)`,
      );
    }
    return;
  }
  const error = flagRulesError(type, rules);
  if (error) throw FlagsErrors.invalid(error);
}
