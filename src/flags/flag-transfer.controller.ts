import { Body, Controller, Get, HttpCode, HttpStatus, Post, Res } from '@nestjs/common';
import type { Response } from 'express';
import { answerWithStatus } from '../http/api-express-adapter';
import {
  ApiBadRequestResponse,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiOkResponse,
  ApiOperation,
  ApiPayloadTooLargeResponse,
  ApiTags,
} from '@nestjs/swagger';
import { CurrentPrincipal, RequirePermission } from '../auth/auth.decorators';
import { Permission } from '../auth/permission';
import { Principal } from '../auth/principal';
import { ApiJsonBody } from '../common/decorators/api-json-body.decorator';
import { ApiErrorDto } from '../common/dto/api-error.dto';
import { FlagExportDto, ImportFlagsDto, ImportRefusedDto, ImportReportDto } from './dto/flag-transfer.dto';
import { FLAG_EXPORT_EXAMPLE, IMPORT_REFUSED_EXAMPLE, IMPORT_REPORT_EXAMPLE, IMPORT_REVIEW_EXAMPLE } from './dto/flag.examples';
import { FlagTransferService } from './flag-transfer.service';
import { AuditedFlagWrite } from './flag-write.interceptor';
import { FlagWriteRun } from './flag-writer';

const isObject = (body: unknown): body is Record<string, unknown> => typeof body === 'object' && body !== null;

/** The import route, which takes bodies up to IMPORT_BODY_LIMIT_BYTES (the rest of the API: 256 KB). */
export const FLAG_IMPORT_PATH = '/v1/flags/import';
export const IMPORT_BODY_LIMIT_BYTES = 2 * 1024 * 1024;

/** Promoting flags between environments (organizations): export from one, import into another. */
@ApiTags('flags')
@Controller('flags')
export class FlagTransferController {
  constructor(private readonly transfers: FlagTransferService) {}

  @Get('export')
  @RequirePermission(Permission.FLAGS_READ)
  @ApiOperation({
    summary: "Export the organization's flags, to import into another",
    description:
      'Every flag, archived ones included, ordered by key, as its organization-independent state: no ids, dates or lock state. ' +
      'POST it to /v1/flags/import of another organization (staging to production) to promote what was tested.',
  })
  @ApiOkResponse({ type: FlagExportDto, example: FLAG_EXPORT_EXAMPLE })
  export(@CurrentPrincipal() principal: Principal): Promise<FlagExportDto> {
    return this.transfers.export(principal.organizationId);
  }

  @Post('import')
  @HttpCode(HttpStatus.OK)
  @RequirePermission(Permission.FLAGS_WRITE, { forbidden: 'The API key (or the session’s role) lacks FLAGS_WRITE', reviewGuarded: true })
  // A dry run writes nothing; `requestReview: true` makes a change request instead of writing.
  @AuditedFlagWrite({ reviewExempt: (body) => isObject(body) && (body.dryRun === true || body.requestReview === true) })
  @ApiOperation({
    summary: 'Import flags from an export: all of it, or nothing',
    description:
      'Flags are matched by key: a new key is created, a known one updated to the document’s state, a flag absent from the document left ' +
      'alone. `keys` takes a subset. Every flag is judged by this organization’s own rules (its allowance, its locked flags, no value ' +
      'change on a flag that stays archived); when any is refused nothing changes and the answer is 409 with the report. `dryRun: true` ' +
      'answers the report (refusals included) and changes nothing. Each change is audited as an edit by the caller, its entry saying it ' +
      'came from an import (`context: {import: true}`); servers ' +
      'get one new config. Bodies up to 2 MB. `requestReview: true` changes nothing and makes a change request of the import instead (201), ' +
      'its dry-run report attached, to be reviewed and applied (POST /v1/change-requests/{id}/apply).',
  })
  @ApiJsonBody(ImportFlagsDto, {
    promote: { summary: 'Promote two flags, trying first', value: { flags: FLAG_EXPORT_EXAMPLE.flags, keys: ['double-xp'], dryRun: true } },
  })
  @ApiOkResponse({ type: ImportReportDto, example: IMPORT_REPORT_EXAMPLE })
  @ApiCreatedResponse({
    description:
      'requestReview: true: nothing changed; the change request made of the import (the flags it would create or change), its dry-run report in `importReport`',
    // By name: the change requests sit above flags, which never import them.
    schema: { $ref: '#/components/schemas/ChangeRequestDto' },
    example: IMPORT_REVIEW_EXAMPLE,
  })
  @ApiBadRequestResponse({ type: ApiErrorDto, description: 'A malformed document: the message names the flag (index and key) and the field' })
  @ApiConflictResponse({
    type: ImportRefusedDto,
    description: 'IMPORT_REFUSED: some flags are refused; nothing changed. The body also holds the report (created, updated, unchanged, refused)',
    example: IMPORT_REFUSED_EXAMPLE,
  })
  @ApiPayloadTooLargeResponse({ type: ApiErrorDto, description: 'The body is larger than 2 MB' })
  import(
    @CurrentPrincipal() principal: Principal,
    @Body() dto: ImportFlagsDto,
    @Res({ passthrough: true }) response: Response,
  ): FlagWriteRun<unknown> {
    // A change request made of the import is a resource made: 201.
    if (dto.requestReview) answerWithStatus(response, HttpStatus.CREATED);
    return (tx) => this.transfers.import(tx, principal.organizationId, dto, principal);
  }
}
