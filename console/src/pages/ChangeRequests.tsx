import { useCallback, useState } from 'react';
import { api, ApiProblem, ok } from '../api/client';
import { useOrganizationEvents } from '../api/events';
import { useLatestRead } from '../api/use-latest-read';
import type { components } from '../../.generated/api';
import { Field } from '../components/Field';
import { Layout } from '../components/Layout';
import { Pager } from '../components/Pager';
import { Link } from '../router';
import { useSignedIn } from '../session';

type Summary = components['schemas']['ChangeRequestSummaryDto'];
export type ChangeRequestState = Summary['state'];
type Filter = ChangeRequestState | 'awaiting-me' | 'all';

const FILTERS: { value: Filter; label: string }[] = [
  { value: 'awaiting-me', label: 'Awaiting my review' },
  { value: 'open', label: 'Open' },
  { value: 'approved', label: 'Approved' },
  { value: 'applied', label: 'Applied' },
  { value: 'declined', label: 'Declined' },
  { value: 'withdrawn', label: 'Withdrawn' },
  { value: 'failed', label: 'Failed' },
  { value: 'all', label: 'All' },
];

/** A state as a person reads it. */
export const STATE_TEXT: Record<ChangeRequestState, string> = {
  open: 'open: awaiting review',
  approved: 'approved: ready to apply',
  applied: 'applied',
  declined: 'declined',
  withdrawn: 'withdrawn',
  failed: 'failed',
};

/** Who acted, as a request shows it. */
export function actorName(actor: components['schemas']['ChangeRequestActorDto']): string {
  if (actor.type === 'system') return 'system (scheduled)';
  if (actor.type === 'apiKey') return `key “${actor.name ?? 'unknown'}”`;
  return actor.name ?? 'a member';
}

/** The person's own setting: whether they are mailed about change requests (PATCH /v1/auth/me), kept in the session. */
function ReviewMailSetting() {
  const session = useSignedIn();
  // Shown as chosen at once; back as it was when the service refuses.
  const [checked, setChecked] = useState(session.user.reviewMail);
  const [saving, setSaving] = useState(false);
  const [problem, setProblem] = useState<ApiProblem | null>(null);
  const change = async (reviewMail: boolean) => {
    setChecked(reviewMail);
    setSaving(true);
    setProblem(null);
    try {
      await ok(api.PATCH('/v1/auth/me', { body: { reviewMail } }));
      await session.reload();
    } catch (error) {
      setChecked(!reviewMail);
      setProblem(error instanceof ApiProblem ? error : new ApiProblem(0, 'NETWORK', String(error)));
    } finally {
      setSaving(false);
    }
  };
  return (
    <>
      <label className="check">
        <input type="checkbox" checked={checked} disabled={saving} onChange={(event) => void change(event.target.checked)} />
        <span>Mail me about change requests</span>
      </label>
      {problem && (
        <span className="error" role="alert">
          {problem.explain()}
        </span>
      )}
    </>
  );
}

/** The organization's change requests, newest first, by state (or those awaiting my review). */
export function ChangeRequests() {
  const [filter, setFilter] = useState<Filter>('open');
  const [page, setPage] = useState(1);
  const read = useCallback(() => {
    const query = filter === 'awaiting-me' ? { awaitingMe: 'true' as const } : filter === 'all' ? {} : { state: filter };
    return ok(api.GET('/v1/change-requests', { params: { query: { ...query, page, limit: 20 } } }));
  }, [filter, page]);
  const { data, problem, reload } = useLatestRead(read);
  useOrganizationEvents((event) => {
    if (event.type === 'change-requests' || event.type === 'review-setting') void reload();
  });
  const results = data?.results ?? [];
  return (
    <Layout title="Change requests">
      <div className="inline-form">
        <Field label="Show">
          {(props) => (
            <select
              {...props}
              value={filter}
              onChange={(event) => {
                setFilter(event.target.value as Filter);
                setPage(1);
              }}
            >
              {FILTERS.map((option) => (
                <option key={option.value} value={option.value}>
                  {option.label}
                </option>
              ))}
            </select>
          )}
        </Field>
        <ReviewMailSetting />
      </div>
      {problem && (
        <p className="error" role="alert">
          {problem.explain()}
        </p>
      )}
      {data && results.length === 0 && <p>No change requests here. A flag’s “Request review” makes one when review is required.</p>}
      {results.length > 0 && (
        <table className="flags">
          <thead>
            <tr>
              <th scope="col">Title</th>
              <th scope="col">Flags</th>
              <th scope="col">Author</th>
              <th scope="col">State</th>
              <th scope="col">Approvals</th>
              <th scope="col">Updated</th>
            </tr>
          </thead>
          <tbody>
            {results.map((request) => (
              <tr key={request.id}>
                <td>
                  <Link to={`/change-requests/${request.id}`}>{request.title}</Link>
                </td>
                <td>{request.keys.join(', ')}</td>
                <td>{actorName(request.author)}</td>
                <td>{STATE_TEXT[request.state]}</td>
                <td>{request.approvals}</td>
                <td>{new Date(request.updatedAt).toLocaleString()}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {data && <Pager page={data.page} totalPages={data.totalPages} onPage={setPage} label="Pages of change requests" />}
    </Layout>
  );
}
