import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Post, Query } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { CurrentPrincipal, RequirePermission } from '../../auth/auth.decorators';
import { Principal } from '../../auth/principal';
import { UuidParam } from '../../common/decorators/uuid-param.decorator';
import { ApiJsonBody } from '../../common/decorators/api-json-body.decorator';
import { ApiErrorDto } from '../../common/dto/api-error.dto';
import { Permission } from '../../auth/permission';
import { DeferredFlagWrite } from '../flag-write.interceptor';
import { CreateFlagScheduleDto, FlagScheduleDto, FlagSchedulePageDto, ListFlagSchedulesQueryDto } from './dto/flag-schedule.dto';
import { SCHEDULE_EXAMPLE, SCHEDULE_PAGE_EXAMPLE } from '../dto/flag.examples';
import { FlagSchedulesService } from './flag-schedules.service';

/** Scheduled changes of one flag (README, "Live operations" under API notes). */
@ApiTags('flags')
@Controller('flags/:flagId/schedules')
export class FlagSchedulesController {
  constructor(private readonly schedules: FlagSchedulesService) {}

  @Post()
  @RequirePermission(Permission.FLAGS_WRITE, { reviewGuarded: true })
  @DeferredFlagWrite()
  @ApiOperation({
    summary: 'Schedule a change: at `at` it is applied as PATCH would apply it, audited as `system`',
    description:
      'Applied within a second of `at` on exactly one instance (or as soon as one is up again). If the flag rules refuse ' +
      'it then (the flag is locked, archived with a value change, or deleted), the schedule becomes `failed` with a ' +
      '`reason` and nothing changes. A flag may have 100 pending schedules.',
  })
  @ApiJsonBody(CreateFlagScheduleDto, {
    turnOn: { summary: 'Turn the event on on Friday evening', value: { at: '2026-12-04T18:00:00Z', change: { type: 'boolean', value: true } } },
    archive: { summary: 'Archive the flag after the weekend', value: { at: '2026-12-07T06:00:00Z', change: { archived: true } } },
  })
  @ApiCreatedResponse({ type: FlagScheduleDto, example: SCHEDULE_EXAMPLE })
  @ApiBadRequestResponse({
    type: ApiErrorDto,
    description:
      'flagId is not a UUID; `at` is not an ISO 8601 instant in the future, at most a year ahead; `change` breaks a PATCH rule or is empty',
  })
  @ApiNotFoundResponse({ type: ApiErrorDto, description: 'No such flag in this organization' })
  @ApiConflictResponse({ type: ApiErrorDto, description: 'TOO_MANY_SCHEDULES: the flag already has 100 pending schedules' })
  create(
    @CurrentPrincipal() principal: Principal,
    @UuidParam('flagId') flagId: string,
    @Body() dto: CreateFlagScheduleDto,
  ): Promise<FlagScheduleDto> {
    return this.schedules.create(principal.organizationId, flagId, dto, principal);
  }

  @Get()
  @RequirePermission(Permission.FLAGS_READ)
  @ApiOperation({
    summary: "The flag's schedules (pending, applied and failed), in the order they apply",
    description:
      'By `at`, then in the order they were made. Applied ones carry `settledAt`; failed ones also the `reason` the flag rules gave ' +
      '(nothing changed then). Cancelled schedules are gone. Pages of 1-100 (20 by default).',
  })
  @ApiOkResponse({ type: FlagSchedulePageDto, example: SCHEDULE_PAGE_EXAMPLE })
  @ApiBadRequestResponse({ type: ApiErrorDto, description: 'flagId is not a UUID, or a bad page or limit' })
  @ApiNotFoundResponse({ type: ApiErrorDto, description: 'No such flag in this organization' })
  list(
    @CurrentPrincipal() principal: Principal,
    @UuidParam('flagId') flagId: string,
    @Query() query: ListFlagSchedulesQueryDto,
  ): Promise<FlagSchedulePageDto> {
    return this.schedules.list(principal.organizationId, flagId, query);
  }

  @Delete(':scheduleId')
  @HttpCode(HttpStatus.NO_CONTENT)
  @RequirePermission(Permission.FLAGS_WRITE)
  @DeferredFlagWrite()
  @ApiOperation({
    summary: 'Cancel a pending schedule (it is removed)',
    description:
      'Only a pending schedule can be cancelled: one that was applied or failed is history (and 404 here, like one never made). ' +
      'Nothing about the flag changes.',
  })
  @ApiNoContentResponse({ description: 'Cancelled' })
  @ApiBadRequestResponse({ type: ApiErrorDto, description: 'flagId or scheduleId is not a UUID' })
  @ApiNotFoundResponse({
    type: ApiErrorDto,
    description: 'No pending schedule with this id for this flag (never made, cancelled, applied or failed)',
  })
  cancel(@CurrentPrincipal() principal: Principal, @UuidParam('flagId') flagId: string, @UuidParam('scheduleId') scheduleId: string): Promise<void> {
    return this.schedules.cancel(principal.organizationId, flagId, scheduleId);
  }
}
