import type { FeatureFlagAuditEntryDto, AuditExportFormat } from './dto/flag-audit.dto';

/** The CSV columns, in this order (README "Audit export"); `before` and `after` are compact JSON, empty when null. */
export const AUDIT_CSV_COLUMNS = ['id', 'createdAt', 'action', 'actorType', 'actorId', 'flagId', 'flagKey', 'before', 'after'] as const;

/** Each format's media type (as documented) and the Content-Type it is sent with. */
export const AUDIT_EXPORT_MEDIA_TYPES: Record<AuditExportFormat, { mediaType: string; contentType: string }> = {
  ndjson: { mediaType: 'application/x-ndjson', contentType: 'application/x-ndjson' },
  csv: { mediaType: 'text/csv', contentType: 'text/csv; charset=utf-8; header=present' },
};

/**
 * The export's text, a batch at a time: NDJSON (one entry per line, as the audit page shows it) or CSV
 * (RFC 4180: a header row, CRLF line ends, fields quoted when they hold a quote, a comma or a line break; a
 * cell that a spreadsheet would run as a formula starts with `'`).
 */
export async function* auditExportText(batches: AsyncIterable<FeatureFlagAuditEntryDto[]>, format: AuditExportFormat): AsyncGenerator<string> {
  const line = format === 'csv' ? csvLine : (entry: FeatureFlagAuditEntryDto) => `${JSON.stringify(entry)}\n`;
  let chunk = format === 'csv' ? `${AUDIT_CSV_COLUMNS.join(',')}\r\n` : '';
  for await (const batch of batches) {
    for (const entry of batch) {
      chunk += line(entry);
      // Chunks stay small enough to die young: V8 puts large strings straight into the old generation, where a
      // stream of them would pile up until a full collection.
      if (chunk.length >= CHUNK_CHARACTERS) {
        yield chunk;
        chunk = '';
      }
    }
  }
  if (chunk.length > 0) yield chunk;
}

const CHUNK_CHARACTERS = 32 * 1024;

function csvLine(entry: FeatureFlagAuditEntryDto): string {
  const cells: Record<(typeof AUDIT_CSV_COLUMNS)[number], string | null> = {
    id: entry.id,
    createdAt: entry.createdAt,
    action: entry.action,
    actorType: entry.actorType,
    actorId: entry.actorId,
    flagId: entry.flagId,
    flagKey: entry.flagKey,
    before: entry.before === null ? null : JSON.stringify(entry.before),
    after: entry.after === null ? null : JSON.stringify(entry.after),
  };
  return `${AUDIT_CSV_COLUMNS.map((column) => csvField(cells[column])).join(',')}\r\n`;
}

/**
 * A cell a spreadsheet would run as a formula: OWASP's CSV injection list (= + - @, and tab or CR, which some
 * spreadsheets skip before reading one of those). No column can start so today (keys, ids, instants, actions,
 * JSON objects), but a column added tomorrow, or a rule loosened, must not make the export an attack.
 */
const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * One CSV field: null is empty; a cell that would start a formula gets a leading `'` (OWASP's advice: shown as
 * text, and the rest of the cell is kept); a field holding a quote, comma, CR or LF is quoted, its quotes doubled.
 */
function csvField(value: string | null): string {
  if (value === null) return '';
  const cell = FORMULA_START.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(cell) ? `"${cell.replace(/"/g, '""')}"` : cell;
}
