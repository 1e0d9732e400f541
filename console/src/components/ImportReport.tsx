import type { components } from '../../.generated/api';

type Report = components['schemas']['ImportReportDto'];

/**
 * An import's report as a person reads it: the flags it creates, updates, leaves unchanged and refuses (with why).
 * The Promote page's dry run and a change request made of a promotion show the same report, so it reads the same.
 */
export function ImportReport({ report }: { report: Report }) {
  return (
    <ul>
      <li>Created: {report.created.join(', ') || 'none'}</li>
      <li>Updated: {report.updated.map((update) => update.key).join(', ') || 'none'}</li>
      <li>Unchanged: {report.unchanged.join(', ') || 'none'}</li>
      <li>Refused: {report.refused.length === 0 ? 'none' : report.refused.map((refusal) => `${refusal.key} (${refusal.reason})`).join('; ')}</li>
    </ul>
  );
}
