import { Controller, Get, Logger, Query, Res } from '@nestjs/common';
import { ApiBadRequestResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { Readable, pipeline } from 'node:stream';
import { CurrentPrincipal, RequirePermission } from '../auth/auth.decorators';
import { Principal } from '../auth/principal';
import { ApiErrorDto } from '../common/dto/api-error.dto';
import { Permission } from '../auth/permission';
import { AuditExportQueryDto, AuditPageDto, AuditQueryDto } from './dto/flag-audit.dto';
import { AUDIT_PAGE_EXAMPLE } from './dto/flag.examples';
import { AUDIT_CSV_COLUMNS, AUDIT_EXPORT_MEDIA_TYPES, auditExportText } from './flag-audit-export';
import { FlagsService } from './flags.service';

const FILTERS_400 = 'A filter is invalid (the message names it), or from is not before to';

@ApiTags('flags')
@Controller('flags/audit')
// The class name is the OpenAPI operationId prefix (AuditController_list): generated clients depend on it.
export class AuditController {
  private readonly logger = new Logger(AuditController.name);

  constructor(private readonly flags: FlagsService) {}

  @Get()
  @RequirePermission(Permission.FLAGS_READ)
  @ApiOperation({
    summary: 'The append-only log of flag changes, newest first, filtered by any of the query fields',
    description:
      'One entry per change, written in the same transaction as the change: who made it (`apiKey` with its key id, or `system` for ' +
      'scheduled changes), the action label, and the whole flag state before and after. The filters combine; `from` is inclusive ' +
      'and `to` exclusive. Pages of 1-100 entries (20 by default); GET /v1/flags/audit/export streams every match instead.',
  })
  @ApiOkResponse({ type: AuditPageDto, example: AUDIT_PAGE_EXAMPLE })
  @ApiBadRequestResponse({ type: ApiErrorDto, description: `Bad page or limit. ${FILTERS_400}` })
  list(@CurrentPrincipal() principal: Principal, @Query() query: AuditQueryDto): Promise<AuditPageDto> {
    return this.flags.history(principal.organizationId, query);
  }

  @Get('export')
  @RequirePermission(Permission.FLAGS_READ)
  @ApiOperation({
    summary: 'Every matching audit entry, oldest first, streamed as NDJSON or CSV',
    description:
      'Takes the filters of the audit page. NDJSON: one entry per line, as the page shows it. CSV (RFC 4180, CRLF): a header ' +
      `row, then the columns ${AUDIT_CSV_COLUMNS.join(', ')}; before and after are compact JSON, empty when null; a cell that ` +
      "would start with = + - @, a tab or a CR (a spreadsheet formula) starts with ' instead. " +
      'Served as an attachment; the whole log is never held in memory.',
  })
  @ApiOkResponse({
    description: 'The entries, as the format asks',
    content: {
      [AUDIT_EXPORT_MEDIA_TYPES.ndjson.mediaType]: { schema: { type: 'string', description: 'One FeatureFlagAuditEntry JSON object per line' } },
      [AUDIT_EXPORT_MEDIA_TYPES.csv.mediaType]: { schema: { type: 'string', description: `CSV with the header ${AUDIT_CSV_COLUMNS.join(',')}` } },
    },
  })
  @ApiBadRequestResponse({ type: ApiErrorDto, description: `format is not ndjson or csv. ${FILTERS_400}` })
  async export(@CurrentPrincipal() principal: Principal, @Query() query: AuditExportQueryDto, @Res() response: Response): Promise<void> {
    const batches = this.flags.exportHistory(principal.organizationId, query);
    // The first batch is read before anything is sent, so that a database fault is still a 503, not a cut export.
    const first = await batches.next();
    const rest = (async function* () {
      if (first.done) return;
      yield first.value;
      yield* batches;
    })();
    response.status(200);
    response.setHeader('Content-Type', AUDIT_EXPORT_MEDIA_TYPES[query.format].contentType);
    response.setHeader('Content-Disposition', `attachment; filename="flag-audit.${query.format}"`);
    response.setHeader('Cache-Control', 'no-store');
    // A fault after the first bytes ends the connection without the last chunk: the client sees a cut transfer.
    // One batch's text waits at a time (Readable.from would buffer 16): memory stays at about two batches.
    const text = Readable.from(auditExportText(rest, query.format), { objectMode: true, highWaterMark: 1 });
    pipeline(text, response, (error) => {
      if (error && (error as NodeJS.ErrnoException).code !== 'ERR_STREAM_PREMATURE_CLOSE') {
        this.logger.warn(`audit export cut off: ${error.message}`);
      }
    });
  }
}
