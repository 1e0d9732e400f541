import { HttpStatus, Inject, Injectable } from '@nestjs/common';
import { CLOCK, Clock } from '../../common/clock';
import { DomainError } from '../../common/domain-error';
import { Principal } from '../../auth/principal';
import { ReviewGate } from '../../review/review-gate';
import { pageWindow, totalPages } from '../../common/dto/pagination';
import { Sql } from '../../database/sql';
import { Transactions } from '../../database/transactions';
import { snapshotOf } from '../flag.model';
import { FlagsErrors } from '../flags.errors';
import { checkRulesFitType } from '../flags.service';
import { FlagsRepository } from '../flags.repository';
import { CreateFlagScheduleDto, FlagScheduleDto, FlagSchedulePageDto, ListFlagSchedulesQueryDto } from './dto/flag-schedule.dto';
import { MAX_PENDING_SCHEDULES_PER_FLAG, MAX_SCHEDULE_AHEAD_MS, ScheduledChange } from './flag-schedule';
import { FlagScheduler } from './flag-scheduler';
import { FlagSchedulesRepository } from './flag-schedules.repository';

/** Making, listing and cancelling schedules; FlagScheduler applies them. */
@Injectable()
export class FlagSchedulesService {
  constructor(
    private readonly sql: Sql,
    private readonly transactions: Transactions,
    private readonly schedules: FlagSchedulesRepository,
    private readonly flags: FlagsRepository,
    private readonly scheduler: FlagScheduler,
    private readonly review: ReviewGate,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {}

  /** `principal`: who asks, for the review setting (a new schedule is a direct write; none named is held to it). */
  async create(organizationId: string, flagId: string, dto: CreateFlagScheduleDto, principal?: Principal): Promise<FlagScheduleDto> {
    const at = new Date(dto.at);
    const now = this.clock.now();
    if (at.getTime() <= now) throw invalid(`at must be in the future (it is ${new Date(now).toISOString()} now)`);
    if (at.getTime() > now + MAX_SCHEDULE_AHEAD_MS) throw invalid('at must be at most one year ahead');
    const change = scheduledChange(dto.change);
    if (Object.keys(change).length === 0)
      throw invalid('change must hold at least one of name, description, type and value, runtime, archived, rules');

    // Counted and inserted under the flag's row lock: creates racing for the last places cannot all pass the count.
    const schedule = await this.transactions.run(async (tx) => {
      // First, under the organization's lock: a schedule made with review off and review turned on cannot cross.
      await this.review.admit(tx, organizationId, principal);
      const flag = await this.flags.findForUpdate(tx, organizationId, flagId);
      if (!flag) throw FlagsErrors.notFound(flagId);
      // Checked again when it applies: the flag's type or rules may change meanwhile.
      checkRulesFitType(snapshotOf(flag), change.type ?? flag.type, change.rules);
      if ((await this.schedules.countPending(tx, organizationId, flagId)) >= MAX_PENDING_SCHEDULES_PER_FLAG) {
        throw FlagsErrors.tooManySchedules(MAX_PENDING_SCHEDULES_PER_FLAG);
      }
      return this.schedules.insert(tx, organizationId, flagId, at, change);
    });
    this.scheduler.scheduled(at);
    return FlagScheduleDto.from(schedule);
  }

  async list(organizationId: string, flagId: string, query: ListFlagSchedulesQueryDto): Promise<FlagSchedulePageDto> {
    if (!(await this.flags.findById(this.sql, organizationId, flagId))) throw FlagsErrors.notFound(flagId);
    const { rows, total } = await this.schedules.list(this.sql, organizationId, flagId, pageWindow(query));
    return { results: rows.map(FlagScheduleDto.from), total, page: query.page, totalPages: totalPages(total, query.limit) };
  }

  async cancel(organizationId: string, flagId: string, scheduleId: string): Promise<void> {
    if (!(await this.schedules.cancel(this.sql, organizationId, flagId, scheduleId))) throw FlagsErrors.scheduleNotFound(scheduleId);
  }
}

const invalid = (message: string) => new DomainError(HttpStatus.BAD_REQUEST, 'VALIDATION_ERROR', message);

/** The fields the body sent, and only those (a DTO instance may carry undefined ones). */
function scheduledChange(dto: ScheduledChange): ScheduledChange {
  const change: ScheduledChange = {};
  if (dto.name !== undefined) change.name = dto.name;
  if (dto.description !== undefined) change.description = dto.description;
  if (dto.type !== undefined) change.type = dto.type;
  if (dto.value !== undefined) change.value = dto.value;
  if (dto.runtime !== undefined) change.runtime = dto.runtime;
  if (dto.archived !== undefined) change.archived = dto.archived;
  if (dto.rules !== undefined) change.rules = dto.rules;
  return change;
}
