import { type FormEvent, useCallback, useState } from 'react';
import { api, ApiProblem, ok } from '../api/client';
import { useLatestRead } from '../api/use-latest-read';
import type { components } from '../../.generated/api';
import { Field } from '../components/Field';
import { Layout } from '../components/Layout';
import { useActors } from '../lib/actors';
import { diff, shown } from '../lib/diff';
import { Link } from '../router';
import { useSignedIn } from '../session';
import { Pager } from '../components/Pager';

type Entry = components['schemas']['FeatureFlagAuditEntryDto'];
type Action = NonNullable<Entry['action']>;
type ActorType = Entry['actorType'];

const ACTIONS: Action[] = ['flag.create', 'flag.update', 'flag.value.set', 'flag.runtime.set', 'flag.archive', 'flag.unarchive', 'flag.delete'];

interface Filters {
  action: Action | '';
  actorType: ActorType | '';
  flagKey: string;
  from: string;
  to: string;
}

const NONE: Filters = { action: '', actorType: '', flagKey: '', from: '', to: '' };

/** The filters as the API takes them: instants from the person's local date and time. */
function queryOf(filters: Filters) {
  const instant = (local: string) => (local ? new Date(local).toISOString() : undefined);
  return {
    ...(filters.action ? { action: filters.action } : {}),
    ...(filters.actorType ? { actorType: filters.actorType } : {}),
    ...(filters.flagKey.trim() ? { flagKey: filters.flagKey.trim() } : {}),
    ...(filters.from ? { from: instant(filters.from) } : {}),
    ...(filters.to ? { to: instant(filters.to) } : {}),
  };
}

/** Every flag change of the organization, newest first, filtered; exported as NDJSON or CSV with the same filters. */
export function AuditLog() {
  const session = useSignedIn();
  const actors = useActors(session.organization?.id);
  const [draft, setDraft] = useState<Filters>(NONE);
  const [filters, setFilters] = useState<Filters>(NONE);
  const [page, setPage] = useState(1);
  const read = useCallback(() => ok(api.GET('/v1/flags/audit', { params: { query: { ...queryOf(filters), page, limit: 20 } } })), [filters, page]);
  const { data: answer, problem: readProblem } = useLatestRead(read);
  const [exportProblem, setExportProblem] = useState<ApiProblem | null>(null);
  const problem = exportProblem ?? readProblem;

  const apply = (event: FormEvent) => {
    event.preventDefault();
    setExportProblem(null);
    setPage(1);
    setFilters(draft);
  };

  const exportAs = async (format: 'ndjson' | 'csv') => {
    setExportProblem(null);
    try {
      const { data, response } = await api.GET('/v1/flags/audit/export', { params: { query: { ...queryOf(filters), format } }, parseAs: 'blob' });
      if (!response.ok || !data) throw new ApiProblem(response.status, `HTTP_${response.status}`, 'The export was refused; check the filters.');
      const link = document.createElement('a');
      link.href = URL.createObjectURL(data as Blob);
      link.download = `flag-audit.${format}`;
      link.click();
      URL.revokeObjectURL(link.href);
    } catch (error) {
      setExportProblem(error as ApiProblem);
    }
  };

  const set = (change: Partial<Filters>) => setDraft((current) => ({ ...current, ...change }));
  return (
    <Layout title="Audit log">
      <form onSubmit={apply} className="filters" noValidate>
        <Field label="Action">
          {(props) => (
            <select {...props} value={draft.action} onChange={(event) => set({ action: event.target.value as Action | '' })}>
              <option value="">Any</option>
              {ACTIONS.map((action) => (
                <option key={action} value={action}>
                  {action}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Made by">
          {(props) => (
            <select {...props} value={draft.actorType} onChange={(event) => set({ actorType: event.target.value as ActorType | '' })}>
              <option value="">Anyone</option>
              <option value="session">people</option>
              <option value="apiKey">API keys</option>
              <option value="system">the system (schedules)</option>
            </select>
          )}
        </Field>
        <Field label="Flag key">
          {(props) => <input {...props} value={draft.flagKey} onChange={(event) => set({ flagKey: event.target.value })} />}
        </Field>
        <Field label="From">
          {(props) => <input {...props} type="datetime-local" value={draft.from} onChange={(event) => set({ from: event.target.value })} />}
        </Field>
        <Field label="Until">
          {(props) => <input {...props} type="datetime-local" value={draft.to} onChange={(event) => set({ to: event.target.value })} />}
        </Field>
        <button type="submit" className="primary">
          Apply filters
        </button>
      </form>
      <div className="actions">
        <button type="button" onClick={() => void exportAs('csv')}>
          Export as CSV
        </button>
        <button type="button" onClick={() => void exportAs('ndjson')}>
          Export as NDJSON
        </button>
      </div>
      {problem && (
        <p className="error" role="alert">
          {problem.explain()}
        </p>
      )}
      {answer && (
        <>
          <p className="quota">{answer.total === 1 ? '1 change' : `${answer.total} changes`}</p>
          <table className="flags audit">
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">Who</th>
                <th scope="col">Flag</th>
                <th scope="col">Action</th>
                <th scope="col">What changed</th>
              </tr>
            </thead>
            <tbody>
              {answer.results.map((entry) => (
                <tr key={entry.id}>
                  <td>
                    <time dateTime={entry.createdAt}>{new Date(entry.createdAt).toLocaleString()}</time>
                  </td>
                  <td>{actors.name(entry.actorType, entry.actorId)}</td>
                  <td>{entry.flagId ? <Link to={`/flags/${entry.flagId}`}>{entry.flagKey}</Link> : entry.flagKey}</td>
                  <td>{entry.action}</td>
                  <td>
                    {entry.before && entry.after
                      ? diff(entry.before, entry.after)
                          .map((change) => `${change.path}: ${shown(change.before)} → ${shown(change.after)}`)
                          .join('; ')
                      : ''}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
          <Pager page={answer.page} totalPages={answer.totalPages} onPage={setPage} />
        </>
      )}
    </Layout>
  );
}
