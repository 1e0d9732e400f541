import { type FormEvent, useCallback, useEffect, useState } from 'react';
import { api, ApiProblem, ok } from '../api/client';
import { useOrganizationEvents } from '../api/events';
import { type ReviewSetting, useReviewSetting } from '../api/review';
import { useLatestRead } from '../api/use-latest-read';
import { useSignedIn } from '../session';
import { Field, FormError } from './Field';
import { Pager } from './Pager';

const APPROVALS = [1, 2, 3, 4, 5];

/** A review setting in words, as its history shows it. */
export function describeSetting(setting: ReviewSetting): string {
  if (!setting.required) return 'review off';
  const approvals = `${setting.approvals} approval${setting.approvals === 1 ? '' : 's'}`;
  return `review required, ${approvals}, ${setting.selfApproval ? 'authors may approve their own' : 'not by the author'}`;
}

/**
 * The organization's review setting (decisions.md, "Change requests"): whether flag changes go through change
 * requests, how many approvals one needs, and whether its author may approve it. Every member sees it and its
 * history; admins change it.
 */
export function ReviewSettings() {
  const session = useSignedIn();
  const { setting, reload } = useReviewSetting();
  const [required, setRequired] = useState(false);
  const [approvals, setApprovals] = useState(1);
  const [selfApproval, setSelfApproval] = useState(false);
  const [problem, setProblem] = useState<ApiProblem | null>(null);
  const [saved, setSaved] = useState(false);
  const [busy, setBusy] = useState(false);
  const [page, setPage] = useState(1);
  const read = useCallback(() => ok(api.GET('/v1/organization/review/history', { params: { query: { page, limit: 10 } } })), [page]);
  const { data: history, problem: historyProblem, reload: reloadHistory } = useLatestRead(read);
  useOrganizationEvents((event) => {
    if (event.type === 'review-setting') void reloadHistory();
  });

  useEffect(() => {
    if (!setting) return;
    setRequired(setting.required);
    setApprovals(setting.approvals);
    setSelfApproval(setting.selfApproval);
  }, [setting]);

  if (!setting) return null;
  const changed = required !== setting.required || approvals !== setting.approvals || selfApproval !== setting.selfApproval;

  const save = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setSaved(false);
    setProblem(null);
    try {
      await ok(api.PUT('/v1/organization/review', { body: { required, approvals, selfApproval } }));
      await Promise.all([reload(), reloadHistory()]);
      setSaved(true);
    } catch (error) {
      setProblem(error as ApiProblem);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section aria-labelledby="review-title">
      <h2 id="review-title">Review of flag changes</h2>
      {session.isAdmin ? (
        <form onSubmit={save} noValidate>
          <label className="check">
            <input type="checkbox" checked={required} onChange={(event) => setRequired(event.target.checked)} />
            <span>Require review: flag changes go through change requests</span>
          </label>
          <div className="inline-form">
            <Field label="Approvals a change request needs" error={problem?.field() === 'approvals' ? problem.explain() : undefined}>
              {(props) => (
                <select {...props} value={approvals} disabled={!required} onChange={(event) => setApprovals(Number(event.target.value))}>
                  {APPROVALS.map((count) => (
                    <option key={count} value={count}>
                      {count}
                    </option>
                  ))}
                </select>
              )}
            </Field>
          </div>
          <label className="check">
            <input type="checkbox" checked={selfApproval} disabled={!required} onChange={(event) => setSelfApproval(event.target.checked)} />
            <span>Authors may approve their own requests</span>
          </label>
          <p className="meta">Turning review on fails the flags’ pending schedules; API keys with FLAGS_WRITE_UNREVIEWED still write directly.</p>
          <FormError message={problem && problem.field() !== 'approvals' ? problem.explain() : null} />
          <div className="actions">
            <button type="submit" disabled={busy || !changed}>
              Save review setting
            </button>
          </div>
          {saved && (
            <p className="saved" role="status">
              Review setting saved.
            </p>
          )}
        </form>
      ) : (
        <p>
          Now: <strong>{describeSetting(setting)}</strong>. Admins change it.
        </p>
      )}
      <h3>History of the review setting</h3>
      {historyProblem && (
        <p className="error" role="alert">
          {historyProblem.explain()}
        </p>
      )}
      {history && history.results.length === 0 && <p className="meta">Never changed: review is off by default.</p>}
      {history && history.results.length > 0 && (
        <table className="flags">
          <thead>
            <tr>
              <th scope="col">When</th>
              <th scope="col">Who</th>
              <th scope="col">Before</th>
              <th scope="col">After</th>
            </tr>
          </thead>
          <tbody>
            {history.results.map((entry) => (
              <tr key={entry.id}>
                <td>{new Date(entry.at).toLocaleString()}</td>
                <td>{entry.user?.name ?? 'a former member'}</td>
                <td>
                  <del>{describeSetting(entry.before)}</del>
                </td>
                <td>
                  <ins>{describeSetting(entry.after)}</ins>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {history && <Pager page={history.page} totalPages={history.totalPages} onPage={setPage} label="Pages of the review setting's history" />}
    </section>
  );
}
