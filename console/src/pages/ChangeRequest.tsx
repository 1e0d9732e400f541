import { type FormEvent, useCallback, useEffect, useRef, useState } from 'react';
import { api, ApiProblem, ok } from '../api/client';
import { useOrganizationEvents } from '../api/events';
import { useReviewSetting } from '../api/review';
import { useLatestRead } from '../api/use-latest-read';
import type { components } from '../../.generated/api';
import { ChangeDiff } from '../components/ChangeDiff';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { EditChangeRequest } from '../components/EditChangeRequest';
import { Field } from '../components/Field';
import { ImportReport } from '../components/ImportReport';
import { Layout } from '../components/Layout';
import { reproposed } from '../lib/refresh';
import { Link } from '../router';
import { useSignedIn } from '../session';
import { actorName, STATE_TEXT } from './ChangeRequests';

type Request = components['schemas']['ChangeRequestDto'];
type Stale = components['schemas']['StaleFlagDto'];
type Refusal = components['schemas']['ImportRefusalDto'];

const TIMELINE_TEXT: Record<Request['timeline'][number]['kind'], string> = {
  opened: 'opened the request',
  edited: 'edited the request (its reviews were cleared)',
  approved: 'approved',
  declined: 'declined',
  applied: 'applied it',
  withdrawn: 'withdrew it',
  failed: 'could not apply it',
};

/** A refusal as a person reads it: a stale request names its flags and fields; a refused one the flags and why. */
export function explainRefusal(problem: ApiProblem): { text: string; items: string[] } {
  const body = (problem.body ?? {}) as { stale?: Stale[]; refused?: Refusal[] };
  if (problem.code === 'CHANGE_REQUEST_STALE') {
    const items = (body.stale ?? []).map((flag) =>
      flag.currentVersion === null
        ? `${flag.key}: deleted since the request was made`
        : flag.requestedVersion === null
          ? `${flag.key}: created since the request was made`
          : `${flag.key}: ${flag.fields.length > 0 ? `its ${flag.fields.join(', ')} changed` : 'changed'} since the request was made`,
    );
    return {
      text: 'Not applied: flags in this request changed after it was made, so applying it would overwrite those changes. Nothing was written. Its author can refresh it to the flags as they are now; it is then reviewed again.',
      items,
    };
  }
  if (problem.code === 'CHANGE_REQUEST_REFUSED') {
    return {
      text: 'Not applied: this organization refuses some of the changes. Nothing was written.',
      items: (body.refused ?? []).map((refusal) => `${refusal.key}: ${refusal.reason}`),
    };
  }
  return { text: problem.explain(), items: [] };
}

function Problem({ problem }: { problem: ApiProblem | null }) {
  if (!problem) return null;
  const { text, items } = explainRefusal(problem);
  return (
    <div className="error" role="alert">
      <p>{text}</p>
      {items.length > 0 && (
        <ul>
          {items.map((item) => (
            <li key={item}>{item}</li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** A change proposed again over its flag as it is now (see `reproposed`); a create or a delete stays as it is. */
async function refreshed(change: Request['changes'][number]) {
  if (!change.flagId || !change.before || !change.after) return { key: change.key, after: change.after ?? null };
  const now = await ok(api.GET('/v1/flags/{flagId}', { params: { path: { flagId: change.flagId } } }));
  const after = reproposed(
    change.before as Record<string, unknown>,
    change.after as Record<string, unknown>,
    now as unknown as Record<string, unknown>,
  );
  return { key: change.key, after: after as never };
}

/** One change request: what it changes (flag by flag), its reviews and timeline, and what this person may do with it. */
export function ChangeRequest({ id }: { id: string }) {
  const session = useSignedIn();
  const { setting } = useReviewSetting();
  const read = useCallback(() => ok(api.GET('/v1/change-requests/{changeRequestId}', { params: { path: { changeRequestId: id } } })), [id]);
  const { data: request, problem: loadProblem, reload } = useLatestRead(read);
  const [comment, setComment] = useState('');
  const [problem, setProblem] = useState<ApiProblem | null>(null);
  const [said, setSaid] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [overriding, setOverriding] = useState(false);
  const [reason, setReason] = useState('');
  const [reasonProblem, setReasonProblem] = useState<ApiProblem | null>(null);
  const [withdrawing, setWithdrawing] = useState(false);
  useOrganizationEvents((event) => {
    if ((event.type === 'change-requests' && event.ids.includes(id)) || event.type === 'review-setting') void reload();
  });

  if (!request) {
    return (
      <Layout title="Change request">
        {loadProblem && (
          <p className="error" role="alert">
            {loadProblem.explain()}
          </p>
        )}
        <Link to="/change-requests">Back to the change requests</Link>
      </Layout>
    );
  }

  const act = async (call: () => Promise<unknown>, done: string) => {
    setBusy(true);
    setProblem(null);
    setSaid(null);
    try {
      await call();
      await reload();
      setSaid(done);
      return true;
    } catch (error) {
      setProblem(error as ApiProblem);
      await reload();
      return false;
    } finally {
      setBusy(false);
    }
  };
  const path = { params: { path: { changeRequestId: id } } };
  const review = (decision: 'approve' | 'decline') => (event?: FormEvent) => {
    event?.preventDefault();
    void act(
      () =>
        ok(
          api.POST('/v1/change-requests/{changeRequestId}/reviews', {
            ...path,
            body: { decision, ...(comment.trim() ? { comment: comment.trim() } : {}) },
          }),
        ),
      decision === 'approve' ? 'Approved.' : 'Declined.',
    ).then((done) => done && setComment(''));
  };
  const apply = () =>
    void act(() => ok(api.POST('/v1/change-requests/{changeRequestId}/apply', { ...path, body: {} })), 'Applied: the flags are changed.');
  const withdraw = () => {
    setWithdrawing(false);
    void act(() => ok(api.POST('/v1/change-requests/{changeRequestId}/withdraw', path)), 'Withdrawn.');
  };
  const override = async (event: FormEvent) => {
    event.preventDefault();
    setReasonProblem(null);
    try {
      await ok(api.POST('/v1/change-requests/{changeRequestId}/apply', { ...path, body: { override: { reason: reason.trim() } } }));
      setOverriding(false);
      setReason('');
      await reload();
      setProblem(null);
      setSaid('Applied without approval: the flags are changed, and the reason is in their history.');
    } catch (error) {
      const refused = error as ApiProblem;
      if (refused.status === 400) setReasonProblem(refused);
      else {
        setOverriding(false);
        setProblem(refused);
        await reload();
      }
    }
  };
  const refresh = () =>
    void act(async () => {
      const changes = await Promise.all(request.changes.map(refreshed));
      return ok(api.PATCH('/v1/change-requests/{changeRequestId}', { ...path, body: { changes } }));
    }, 'Refreshed to the flags as they are now: the request needs its reviews again.');

  const me = session.user.id;
  const isAuthor = request.author.type === 'session' && request.author.id === me;
  const pending = request.state === 'open' || request.state === 'approved';
  const reviewed = request.reviews.some((entry) => entry.user.id === me);
  const mayReview = session.canWrite && pending && !reviewed && (!isAuthor || setting?.selfApproval === true);
  const approvals = request.reviews.filter((entry) => entry.decision === 'approve').length;
  const stale = problem?.code === 'CHANGE_REQUEST_STALE';

  return (
    <Layout title={request.title}>
      <p className="meta">
        <Link to="/change-requests">Change requests</Link> · by {actorName(request.author)} · {new Date(request.createdAt).toLocaleString()}
      </p>
      <p>
        <strong>State:</strong> <span className={`badge state-${request.state}`}>{STATE_TEXT[request.state]}</span>
        {pending && (
          <span>
            {' '}
            · {approvals} of {request.approvalsNeeded} approval{request.approvalsNeeded === 1 ? '' : 's'}
          </span>
        )}
        {request.applyAt && pending && <span> · to apply at {new Date(request.applyAt).toLocaleString()} once approved</span>}
      </p>
      {request.description && <p className="description">{request.description}</p>}
      {request.override && (
        <p className="notice warning" role="note">
          Applied without approval by an admin. Reason: {request.override.reason}
        </p>
      )}
      {request.failureReason && (
        <p className="notice warning" role="note">
          The scheduled apply failed: {request.failureReason}
        </p>
      )}
      {isAuthor && pending && (
        <EditChangeRequest
          request={request}
          onSaved={async () => {
            await reload();
            setProblem(null);
            setSaid('Details saved: the request is reviewed again.');
          }}
        />
      )}
      {said && (
        <p className="saved" role="status">
          {said}
        </p>
      )}
      <Problem problem={problem} />
      {stale && isAuthor && pending && (
        <p>
          <button type="button" onClick={refresh} disabled={busy}>
            Refresh the request to the flags as they are now
          </button>
        </p>
      )}

      <section aria-labelledby="changes-title">
        <h2 id="changes-title">
          What it changes ({request.changes.length} flag{request.changes.length === 1 ? '' : 's'})
        </h2>
        {request.changes.map((change) => (
          <ChangeDiff key={change.key} change={change} />
        ))}
      </section>

      {request.importReport && (
        <section aria-labelledby="import-report-title">
          <h2 id="import-report-title">What the promotion would do</h2>
          <p className="meta">The promotion’s dry run when the request was made.</p>
          <ImportReport report={request.importReport} />
        </section>
      )}

      {session.canWrite && pending && (
        <section aria-labelledby="decide-title">
          <h2 id="decide-title">Decide</h2>
          {mayReview ? (
            <form onSubmit={review('approve')} noValidate>
              <Field label="Comment (optional)" error={problem?.field() === 'comment' ? problem.message : undefined}>
                {(props) => <textarea {...props} rows={2} maxLength={2000} value={comment} onChange={(event) => setComment(event.target.value)} />}
              </Field>
              <div className="actions">
                <button type="submit" className="primary" disabled={busy}>
                  Approve
                </button>
                <button type="button" className="danger" disabled={busy} onClick={() => review('decline')()}>
                  Decline
                </button>
              </div>
            </form>
          ) : (
            <p className="meta">
              {reviewed
                ? 'You reviewed this version of the request.'
                : isAuthor
                  ? 'You made this request: somebody else reviews it.'
                  : 'You cannot review this request.'}
            </p>
          )}
          <div className="actions">
            {request.state === 'approved' && (
              <button type="button" className="primary" disabled={busy} onClick={apply}>
                Apply
              </button>
            )}
            {session.isAdmin && request.state === 'open' && (
              <button type="button" disabled={busy} onClick={() => setOverriding(true)}>
                Apply without approval…
              </button>
            )}
            {isAuthor && (
              <button type="button" className="danger" disabled={busy} onClick={() => setWithdrawing(true)}>
                Withdraw
              </button>
            )}
          </div>
        </section>
      )}

      <section aria-labelledby="reviews-title">
        <h2 id="reviews-title">Reviews</h2>
        {request.reviews.length === 0 ? (
          <p className="meta">No reviews of this version yet.</p>
        ) : (
          <ul>
            {request.reviews.map((entry) => (
              <li key={`${entry.user.id}-${entry.at}`}>
                <strong>{entry.user.name}</strong> {entry.decision === 'approve' ? 'approved' : 'declined'} · {new Date(entry.at).toLocaleString()}
                {entry.comment && <>: “{entry.comment}”</>}
              </li>
            ))}
          </ul>
        )}
      </section>

      <section aria-labelledby="timeline-title">
        <h2 id="timeline-title">Timeline</h2>
        <ol className="timeline">
          {request.timeline.map((event, index) => (
            <li key={index}>
              <strong>{actorName(event.actor)}</strong> {TIMELINE_TEXT[event.kind]}
              {event.override ? ' without the approvals' : ''} · {new Date(event.at).toLocaleString()}
              {event.reason && <div className="meta">{event.override ? `Reason: ${event.reason}` : `“${event.reason}”`}</div>}
            </li>
          ))}
        </ol>
      </section>

      <OverrideDialog
        open={overriding}
        approvals={request.approvalsNeeded}
        reason={reason}
        problem={reasonProblem}
        onReason={setReason}
        onSubmit={override}
        onCancel={() => {
          setOverriding(false);
          setReasonProblem(null);
        }}
      />
      <ConfirmDialog open={withdrawing} title="Withdraw this request?" confirm="Withdraw" onConfirm={withdraw} onCancel={() => setWithdrawing(false)}>
        <p>It can no longer be reviewed or applied. Nothing in the flags changes.</p>
      </ConfirmDialog>
    </Layout>
  );
}

/** An admin's apply without the approvals: a modal asking for the reason, which goes into every flag's history. */
function OverrideDialog(props: {
  open: boolean;
  approvals: number;
  reason: string;
  problem: ApiProblem | null;
  onReason: (reason: string) => void;
  onSubmit: (event: FormEvent) => void;
  onCancel: () => void;
}) {
  const dialog = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const element = dialog.current;
    if (!element) return;
    if (props.open && !element.open) element.showModal();
    if (!props.open && element.open) element.close();
  }, [props.open]);
  return (
    <dialog ref={dialog} aria-labelledby="override-title" onCancel={props.onCancel} onClose={() => props.open && props.onCancel()}>
      <form onSubmit={props.onSubmit} noValidate>
        <h2 id="override-title">Apply without approval?</h2>
        <p>
          The flags change now, without the {props.approvals} approval{props.approvals === 1 ? '' : 's'} the organization requires. Your reason goes
          into every changed flag’s history and this request’s timeline.
        </p>
        <Field label="Reason" error={props.problem ? props.problem.explain() : undefined}>
          {(field) => <textarea {...field} rows={2} maxLength={500} value={props.reason} onChange={(event) => props.onReason(event.target.value)} />}
        </Field>
        <div className="actions">
          <button type="submit" className="danger" disabled={props.reason.trim() === ''}>
            Apply without approval
          </button>
          <button type="button" onClick={props.onCancel}>
            Cancel
          </button>
        </div>
      </form>
    </dialog>
  );
}
