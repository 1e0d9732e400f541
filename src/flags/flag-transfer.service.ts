import { BadRequestException, Injectable } from '@nestjs/common';
import { validate } from 'class-validator';
import { describeValidationErrors } from '../common/validation';
import type { Principal } from '../auth/principal';
import type { OrganizationEvent } from '../events/organization-events';
import { Sql, Transaction } from '../database/sql';
import { OrganizationsErrors } from '../organizations/organizations.errors';
import { OrganizationsRepository } from '../organizations/organizations.repository';
import { QuotaService } from '../quota/quota.service';
import { ExportedFlagDto, FlagExportDto, ImportFlagsDto, ImportReportDto } from './dto/flag-transfer.dto';
import { editBetween, Flag, FlagChange, flagChange, FlagSnapshot, snapshotOf, withRules } from './flag.model';
import { FlagWrite } from './flag-writer';
import { FlagsErrors } from './flags.errors';
import { FlagsRepository } from './flags.repository';
import { FlagSchedulesRepository } from './schedules/flag-schedules.repository';

/** One step of an import, decided before anything is written. */
type Step = { create: ExportedFlagDto } | { update: Flag; after: FlagSnapshot };

/** Makes a change request of an import's `entries` (those that change something), in the import's transaction. */
export type ImportReviewRequester = (
  tx: Transaction,
  author: Principal,
  request: { title?: string; description?: string; entries: ExportedFlagDto[]; report: ImportReportDto },
) => Promise<{ body: unknown; event: OrganizationEvent }>;

/** An import's decisions (FlagTransferService.plan): its report, the keys it deletes, and the write, to run once nothing is refused. */
export interface TransferPlan {
  report: ImportReportDto;
  deleted: string[];
  run(): Promise<FlagChange[]>;
}

/**
 * Environments (README, "Environments"): an organization's flags as a document, and that document applied to
 * another organization. An import is one transaction under the target organization's lock, as a create is: it
 * decides every flag against the target's own rules (allowance, locks, the archived-value rule) before it writes
 * anything, then writes all of it or nothing. Each flag it creates or changes is audited as usual, and the payload
 * is rebuilt once (FlagWriter bumps the config version and announces once per write).
 */
@Injectable()
export class FlagTransferService {
  constructor(
    private readonly sql: Sql,
    private readonly flags: FlagsRepository,
    private readonly organizations: OrganizationsRepository,
    private readonly quota: QuotaService,
    private readonly schedules: FlagSchedulesRepository,
  ) {}

  async export(organizationId: string): Promise<FlagExportDto> {
    const flags = await this.flags.all(this.sql, organizationId);
    return { flags: flags.map((flag) => ({ key: flag.key, ...snapshotOf(flag) })) };
  }

  /**
   * Who makes a change request of an import (`requestReview: true`): the change requests, which sit above flags and
   * register here when they start, so flags never import them.
   */
  private reviewRequester: ImportReviewRequester | null = null;

  requestReviewsWith(requester: ImportReviewRequester): void {
    this.reviewRequester = requester;
  }

  /** The import, or with `requestReview` the change request made of it (`author` is who asks: the request's author). */
  async import(tx: Transaction, organizationId: string, dto: ImportFlagsDto, author?: Principal): Promise<FlagWrite<unknown>> {
    if (!dto.requestReview && (dto.title !== undefined || dto.description !== undefined)) {
      throw new BadRequestException('title and description are those of a change request: send them with requestReview: true');
    }
    if (dto.requestReview && dto.dryRun) throw new BadRequestException('requestReview and dryRun: choose one (a request carries its dry-run report)');
    const entries = selected(await validEntries(dto.flags), dto.keys);
    const plan = await this.plan(tx, organizationId, entries);
    if (dto.requestReview) {
      if (!this.reviewRequester || !author) throw new Error('No change requests to make a request of an import');
      const unchanged = new Set(plan.report.unchanged);
      const changes = entries.filter((entry) => !unchanged.has(entry.key));
      if (changes.length === 0) throw new BadRequestException('flags: the import changes nothing here, so there is nothing to review');
      const request = await this.reviewRequester(tx, author, {
        title: dto.title,
        description: dto.description,
        entries: changes,
        report: plan.report,
      });
      return new FlagWrite(request.body, null, undefined, [{ organizationId, event: request.event }]);
    }
    if (dto.dryRun) return new FlagWrite(plan.report, null);
    if (plan.report.refused.length > 0) throw FlagsErrors.importRefused(plan.report);
    return new FlagWrite(plan.report, await plan.run()).because({ import: true });
  }

  /**
   * What writing `entries` (whole proposed states, by key) and deleting the flags `deleteKeys` names would do, decided
   * under the organization's lock against its own rules (allowance, locks, the archived-value rule) before anything is
   * written: the import's report, and the write to run when nothing is refused. The import and a change request's
   * apply both go through here. A deletion is never refused (as DELETE /v1/flags/{flagId}) and frees its place in the
   * allowance for the creates beside it; a key to delete that has no flag is left out.
   */
  async plan(
    tx: Transaction,
    organizationId: string,
    entries: readonly ExportedFlagDto[],
    deleteKeys: readonly string[] = [],
  ): Promise<TransferPlan> {
    if (!(await this.organizations.lockOrganization(tx, organizationId))) throw OrganizationsErrors.organizationDeleted();
    const {
      quota: { max, used },
      allowance,
      lockedFlagIds,
    } = await this.quota.snapshot(tx, organizationId);
    const current = new Map((await this.flags.all(tx, organizationId, 'FOR UPDATE')).map((flag) => [flag.key, flag]));

    const report: ImportReportDto = { created: [], updated: [], unchanged: [], refused: [] };
    const steps: Step[] = [];
    const deletions = deleteKeys.map((key) => current.get(key)).filter((flag): flag is Flag => flag !== undefined);
    let count = used - deletions.length;
    for (const entry of entries) {
      const { key, ...after } = entry;
      const flag = current.get(key);
      if (!flag) {
        if (count >= max) {
          report.refused.push({ key, reason: FlagsErrors.allowanceReached(allowance).message });
          continue;
        }
        count += 1;
        report.created.push(key);
        steps.push({ create: entry });
        continue;
      }
      const before = snapshotOf(flag);
      const edit = editBetween(before, after);
      if (!edit.value && !edit.runtime && !edit.details && !edit.archived) {
        report.unchanged.push(key);
      } else if (lockedFlagIds.has(flag.id) && (edit.value || edit.runtime || edit.details)) {
        report.refused.push({ key, reason: FlagsErrors.locked(key, allowance).message });
      } else if (edit.value && before.archived && after.archived) {
        report.refused.push({ key, reason: FlagsErrors.archivedValueChange(key).message });
      } else {
        report.updated.push({ key, before, after });
        steps.push({ update: flag, after });
      }
    }
    return {
      report,
      deleted: deletions.map((flag) => flag.key),
      run: async () => {
        const changes: FlagChange[] = [];
        // Deletions first: a create beside them may take the allowance they free.
        for (const flag of deletions) {
          await this.flags.delete(tx, organizationId, flag.id);
          await this.schedules.failPendingOfFlag(tx, organizationId, flag.id, `Flag "${flag.key}" was deleted`);
          changes.push({ ...flagChange(organizationId, null, flag.key, snapshotOf(flag), null)!, deletedFlagId: flag.id });
        }
        for (const step of steps) changes.push(await this.apply(tx, organizationId, step));
        return changes;
      },
    };
  }

  private async apply(tx: Transaction, organizationId: string, step: Step): Promise<FlagChange> {
    if ('create' in step) {
      const { key, ...state } = step.create;
      // The key was free under the organization's lock: no other write can have taken it since.
      const flag = (await this.flags.insert(tx, organizationId, { key, ...state }))!;
      return flagChange(organizationId, flag.id, key, null, state)!;
    }
    const updated = await this.flags.update(tx, organizationId, step.update.id, step.after);
    return flagChange(organizationId, updated.id, updated.key, snapshotOf(step.update), step.after)!;
  }
}

/** Each entry checked by ExportedFlagDto's rules, a 400 naming the flag (its index, and key when it has one) and the field. */
async function validEntries(flags: unknown[]): Promise<ExportedFlagDto[]> {
  const entries: ExportedFlagDto[] = [];
  const seen = new Set<string>();
  for (const [index, raw] of flags.entries()) {
    const key = typeof (raw as { key?: unknown })?.key === 'string' ? (raw as { key: string }).key : undefined;
    const where = `flags[${index}]${key === undefined ? '' : ` ("${key}")`}`;
    const entry = await validFlagEntry(raw, where);
    if (seen.has(entry.key)) throw new BadRequestException(`${where}: key "${entry.key}" is in the document twice`);
    seen.add(entry.key);
    entries.push(entry);
  }
  return entries.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
}

/**
 * One flag's whole state with its key, checked by ExportedFlagDto's rules (an import's entry, a change request's
 * proposed state): a 400 naming `where` and the field.
 */
export async function validFlagEntry(raw: unknown, where: string): Promise<ExportedFlagDto> {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new BadRequestException(`${where} must be an object`);
  // class-validator's whitelist looks each field up in a plain object, where Object.prototype's names (`__proto__`,
  // `constructor`, `hasOwnProperty`) are always found: refused here, as the whitelist refuses every other unknown field.
  const inherited = Object.keys(raw).find((field) => field in Object.prototype);
  if (inherited !== undefined) throw new BadRequestException(`${where}: property ${inherited} should not exist`);
  const entry = entryOf(raw as Record<string, unknown>);
  const errors = await validate(entry, { whitelist: true, forbidNonWhitelisted: true });
  if (errors.length > 0) throw new BadRequestException(`${where}: ${describeValidationErrors(errors)}`);
  const { rules, ...state } = entry;
  return withRules({ ...state, description: state.description ?? null }, rules);
}

/**
 * The entry as an ExportedFlagDto for class-validator, every field as sent. Not through class-transformer, which
 * walks into the value and cannot take the keys a JSON value may have (`constructor`, `__proto__`): each field is
 * defined as an own property, so an entry's own `__proto__` is a field (refused as unknown), never a prototype.
 */
function entryOf(raw: Record<string, unknown>): ExportedFlagDto {
  const entry = new ExportedFlagDto();
  entry.description = null;
  for (const key of Object.keys(raw)) Object.defineProperty(entry, key, { value: raw[key], enumerable: true, writable: true, configurable: true });
  return entry;
}

/** The entries `keys` names (every one of which must be in the document), or all of them. */
function selected(entries: ExportedFlagDto[], keys: string[] | undefined): ExportedFlagDto[] {
  if (keys === undefined) return entries;
  const inDocument = new Set(entries.map((entry) => entry.key));
  const missing = keys.find((key) => !inDocument.has(key));
  if (missing !== undefined) throw new BadRequestException(`keys: "${missing}" is not a flag of the document`);
  const wanted = new Set(keys);
  return entries.filter((entry) => wanted.has(entry.key));
}
