import type { FeatureFlagAuditEntryDto } from './dto/flag-audit.dto';
import { FlagAction } from './flag.model';
import { auditExportText } from './flag-audit-export';

async function csvOf(entries: FeatureFlagAuditEntryDto[]): Promise<string[]> {
  let text = '';
  for await (const chunk of auditExportText(
    (async function* () {
      yield entries;
    })(),
    'csv',
  ))
    text += chunk;
  const lines = text.split('\r\n');
  expect(lines.pop()).toBe('');
  return lines.slice(1);
}

const entry = (fields: Partial<FeatureFlagAuditEntryDto>): FeatureFlagAuditEntryDto => ({
  id: '7b0a4c1e-2f0e-4d5b-9a57-0d1c2b3a4f5e',
  flagId: null,
  flagKey: 'xp',
  actorType: 'system',
  actorId: null,
  action: FlagAction.UPDATE,
  before: null,
  after: null,
  createdAt: '2026-12-04T18:00:00.000Z',
  ...fields,
});

describe('audit CSV export', () => {
  // OWASP, CSV injection: a spreadsheet runs a cell that starts with = + - @ (or a tab or CR before them) as a
  // formula. Such a cell is sent with a leading ' (which spreadsheets show as text), then quoted as RFC 4180 asks.
  it.each([
    ['=HYPERLINK("http://x","y")', `"'=HYPERLINK(""http://x"",""y"")"`],
    ['+1+1', `'+1+1`],
    ['-1+1', `'-1+1`],
    ['@SUM(A1)', `'@SUM(A1)`],
    ['\t=1', `'\t=1`],
    ['\r=1', `"'\r=1"`],
  ])('neutralises a cell starting with a formula character: %j', async (flagKey, cell) => {
    const [line] = await csvOf([entry({ flagKey })]);
    expect(line).toBe(`7b0a4c1e-2f0e-4d5b-9a57-0d1c2b3a4f5e,2026-12-04T18:00:00.000Z,flag.update,system,,,${cell},,`);
  });

  it('leaves every other cell as it is, formula characters inside a cell included', async () => {
    const after = { name: '=x', description: null, type: 'string' as const, value: '-1', runtime: 'shared' as const, archived: false };
    const [line] = await csvOf([entry({ flagKey: 'a=b', actorId: 'k-1', after })]);
    expect(line).toBe(
      '7b0a4c1e-2f0e-4d5b-9a57-0d1c2b3a4f5e,2026-12-04T18:00:00.000Z,flag.update,system,k-1,,a=b,,' +
        `"${JSON.stringify(after).replace(/"/g, '""')}"`,
    );
  });
});
