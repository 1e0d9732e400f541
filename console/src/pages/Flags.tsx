import { useCallback, useEffect, useState } from 'react';
import { api, ApiProblem, ok } from '../api/client';
import { useOrganizationEvents } from '../api/events';
import { useLatestRead } from '../api/use-latest-read';
import type { components } from '../../.generated/api';
import { Layout } from '../components/Layout';
import { preview } from '../lib/flag-values';
import { Link, navigate, useLocation } from '../router';
import { useSignedIn } from '../session';
import { Pager } from '../components/Pager';

type FlagPage = components['schemas']['FlagPageDto'];
type Flag = components['schemas']['FeatureFlagDto'];

const PAGE_SIZE = 20;
/** The service's own words for a locked flag (FeatureFlagDto.locked). */
export const LOCKED_REASON =
  "Beyond the plan's limit: this flag keeps serving its value, but cannot be edited until the organization subscribes again or removes another flag.";

/** Changes the list's address: its search, archived filter and page. */
function setQuery(changes: { search?: string; archived?: boolean; page?: number }): void {
  const next = new URLSearchParams(location.search);
  const set = (name: string, value: string | undefined) => (value ? next.set(name, value) : next.delete(name));
  if (changes.search !== undefined) set('search', changes.search);
  if (changes.archived !== undefined) set('archived', changes.archived ? '1' : undefined);
  if (changes.page !== undefined) set('page', changes.page > 1 ? String(changes.page) : undefined);
  const query = next.toString();
  navigate(`/flags${query ? `?${query}` : ''}`, { replace: true });
}

/** The flag list: search, the archived filter and paging live in the address, so a link or a reload keeps them. */
export function Flags() {
  const session = useSignedIn();
  const { search: params } = useLocation();
  const search = params.get('search') ?? '';
  const includeArchived = params.get('archived') === '1';
  const page = Math.max(1, Number(params.get('page')) || 1);
  const [rowProblem, setRowProblem] = useState<{ key: string; message: string } | null>(null);
  const [typed, setTyped] = useState(search);

  const read = useCallback(() => {
    const query = { page, limit: PAGE_SIZE, includeArchived: includeArchived ? 'true' : 'false', ...(search ? { search } : {}) } as const;
    return ok(api.GET('/v1/flags', { params: { query } }));
  }, [page, includeArchived, search]);
  const { data, problem, reload: load } = useLatestRead<FlagPage>(read);
  // A flag changed by anyone (another person, a key, a schedule): read the page again.
  useOrganizationEvents((event) => {
    if (event.type === 'flags') void load();
  });

  // The search box updates the address a moment after typing stops.
  useEffect(() => {
    if (typed === search) return;
    const timer = setTimeout(() => setQuery({ search: typed, page: 1 }), 250);
    return () => clearTimeout(timer);
  }, [typed, search]);

  const toggle = async (flag: Flag) => {
    setRowProblem(null);
    try {
      await ok(api.PATCH('/v1/flags/{flagId}', { params: { path: { flagId: flag.id } }, body: { type: 'boolean', value: flag.value !== true } }));
      await load();
    } catch (error) {
      setRowProblem({ key: flag.key, message: (error as ApiProblem).explain() });
    }
  };

  const quota = data?.quota;
  return (
    <Layout title="Flags">
      <div className="toolbar">
        <label className="search">
          <span>Search</span>
          <input type="search" value={typed} placeholder="Key or name" onChange={(event) => setTyped(event.target.value)} />
        </label>
        <label className="check">
          <input type="checkbox" checked={includeArchived} onChange={(event) => setQuery({ archived: event.target.checked, page: 1 })} />
          <span>Show archived flags</span>
        </label>
        {session.canWrite && (
          <Link to="/flags/new" className="button primary">
            New flag
          </Link>
        )}
      </div>
      {quota && (
        <p className="quota" aria-label="Quota">
          <strong>
            {quota.used} of {quota.max}
          </strong>{' '}
          flags used{quota.locked > 0 ? `, ${quota.locked} locked` : ''} · {quota.subscribed ? 'subscribed' : 'no subscription (5 flags)'}
        </p>
      )}
      {problem && (
        <p className="error" role="alert">
          {problem.explain()}
        </p>
      )}
      {rowProblem && (
        <p className="error" role="alert">
          {rowProblem.key}: {rowProblem.message}
        </p>
      )}
      {data && data.results.length === 0 && <p>{search ? `No flag matches “${search}”.` : 'No flags yet.'}</p>}
      {data && data.results.length > 0 && (
        <table className="flags">
          <caption className="visually-hidden">Flags, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Key</th>
              <th scope="col">Name</th>
              <th scope="col">Type</th>
              <th scope="col">Value</th>
              <th scope="col">Runtime</th>
              <th scope="col">State</th>
            </tr>
          </thead>
          <tbody>
            {data.results.map((flag) => (
              <tr key={flag.id}>
                <td>
                  <Link to={`/flags/${flag.id}`}>{flag.key}</Link>
                </td>
                <td>{flag.name}</td>
                <td>{flag.type}</td>
                <td>
                  {flag.type === 'boolean' ? (
                    <button
                      type="button"
                      role="switch"
                      className="switch"
                      aria-checked={flag.value === true}
                      aria-label={flag.key}
                      disabled={!session.canWrite || flag.locked || flag.archived}
                      title={flag.locked ? LOCKED_REASON : undefined}
                      onClick={() => void toggle(flag)}
                    >
                      <span aria-hidden="true" className="switch-track">
                        <span className="switch-thumb" />
                      </span>
                      <span aria-hidden="true">{flag.value === true ? 'On' : 'Off'}</span>
                    </button>
                  ) : (
                    <code>{preview(flag.value)}</code>
                  )}
                  {flag.rules && flag.rules.length > 0 && <span className="badge">{flag.rules.length} rules</span>}
                </td>
                <td>{flag.runtime}</td>
                <td>
                  {flag.archived && <span className="badge">Archived</span>}
                  {flag.locked && (
                    <span className="badge warning" title={LOCKED_REASON}>
                      Locked
                    </span>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {data && <Pager page={data.page} totalPages={data.totalPages} onPage={(next) => setQuery({ page: next })} />}
    </Layout>
  );
}
