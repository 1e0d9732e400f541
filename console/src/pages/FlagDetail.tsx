import { type FormEvent, useCallback, useEffect, useRef, useState } from 'react';
import { api, ApiProblem, type FlagWrite, ok, okVersioned, type Versioned, versionOf } from '../api/client';
import { useOrganizationEvents } from '../api/events';
import { useReviewSetting } from '../api/review';
import type { components } from '../../.generated/api';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { Field, FormError } from '../components/Field';
import { History } from '../components/History';
import { RequestTitleField, requestReview } from '../components/RequestReview';
import { Layout } from '../components/Layout';
import { RulesEditor } from '../components/RulesEditor';
import { Schedules } from '../components/Schedules';
import { JSON_HELP, ValueEditor } from '../components/ValueEditor';
import { type FlagType, RUNTIME_HELP } from '../lib/flag-values';
import { Link, navigate } from '../router';
import { useSignedIn } from '../session';
import { LOCKED_REASON } from './Flags';

type Flag = components['schemas']['FeatureFlagDto'];
type Update = components['schemas']['UpdateFlagDto'];
type FlagState = components['schemas']['FlagStateDto'];

/** A flag's whole state, as a change request proposes it. */
function stateOf(flag: Flag): FlagState {
  return {
    name: flag.name,
    description: flag.description ?? null,
    type: flag.type,
    value: flag.value as never,
    runtime: flag.runtime,
    archived: flag.archived,
    ...(flag.rules && flag.rules.length > 0 ? { rules: flag.rules } : {}),
  };
}

/**
 * One flag: edit its name, description, value and runtime; archive, unarchive or delete it. Every write sends the
 * version the page shows as If-Match, so a change somebody made meanwhile is refused (412), never overwritten; and
 * the page knows its own write when the event stream tells of it, by the version the write answered.
 */
export function FlagDetail({ id }: { id: string }) {
  const session = useSignedIn();
  const [current, setCurrent] = useState<Versioned<Flag> | null>(null);
  const flag = current?.data ?? null;
  const [loadProblem, setLoadProblem] = useState<ApiProblem | null>(null);
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [value, setValue] = useState<{ value: unknown; problem: string | null }>({ value: null, problem: null });
  const [runtime, setRuntime] = useState<'shared' | 'server'>('shared');
  const [problem, setProblem] = useState<ApiProblem | null>(null);
  const [saved, setSaved] = useState(false);
  // Under review (the organization's setting), Save makes a change request of this flag instead, titled by the person.
  const reviewRequired = useReviewSetting().setting?.required === true;
  const [title, setTitle] = useState('');
  const [confirmDelete, setConfirmDelete] = useState(false);
  // Changed elsewhere while this page held unsaved edits (`changed`), or a save refused for that reason (`refused`).
  const [conflict, setConflict] = useState<'changed' | 'refused' | null>(null);
  // Starts the rules editor afresh (its drafts discarded) when the person asks for the latest.
  const [fresh, setFresh] = useState(0);
  // The newest version this page has shown or written, and the write in flight: an event about a version no newer is
  // this page's own write (or old news), never somebody else's.
  const known = useRef(0);
  const writing = useRef<Promise<unknown> | null>(null);

  const show = useCallback((next: Versioned<Flag>) => {
    known.current = Math.max(known.current, versionOf(next.etag));
    setCurrent(next);
    setName(next.data.name);
    setDescription(next.data.description ?? '');
    setValue({ value: next.data.value, problem: null });
    setRuntime(next.data.runtime);
  }, []);
  const read = useCallback(() => okVersioned(api.GET('/v1/flags/{flagId}', { params: { path: { flagId: id } } })), [id]);

  useEffect(() => {
    read().then(show, (error: ApiProblem) => setLoadProblem(error));
  }, [read, show]);

  const showLatest = () => {
    setConflict(null);
    setProblem(null);
    setFresh((count) => count + 1);
    read().then(show, (error: ApiProblem) => setLoadProblem(error));
  };

  // Changed elsewhere: shown at once unless this form holds unsaved edits, which are never overwritten.
  const dirty =
    flag !== null &&
    (name !== flag.name ||
      description !== (flag.description ?? '') ||
      runtime !== flag.runtime ||
      JSON.stringify(value.value) !== JSON.stringify(flag.value));
  const dirtyNow = useRef(dirty);
  dirtyNow.current = dirty;
  useOrganizationEvents((event) => {
    if (event.type !== 'flags' || !event.flagIds.includes(id)) return;
    void (async () => {
      // A write of this page in flight: its answer says which version it made, before the event is judged.
      await writing.current?.catch(() => undefined);
      let latest: Versioned<Flag>;
      try {
        latest = await read();
      } catch (error) {
        setLoadProblem(error as ApiProblem);
        return;
      }
      if (versionOf(latest.etag) <= known.current) return;
      if (dirtyNow.current) setConflict((now) => now ?? 'changed');
      else show(latest);
    })();
  });

  if (loadProblem) {
    return (
      <Layout title="Flag">
        <p className="error" role="alert">
          {loadProblem.explain()}
        </p>
        <Link to="/flags">Back to the flags</Link>
      </Layout>
    );
  }
  if (!flag || !current) return <Layout title="Flag">{null}</Layout>;

  const write: FlagWrite = async (send) => {
    const attempt = send(current.etag);
    writing.current = attempt;
    try {
      const answer = await attempt;
      show(answer);
      return answer.data;
    } catch (error) {
      if ((error as ApiProblem).code === 'FLAG_CHANGED') setConflict('refused');
      throw error;
    } finally {
      if (writing.current === attempt) writing.current = null;
    }
  };
  const patch = (body: Update) =>
    write((etag) => okVersioned(api.PATCH('/v1/flags/{flagId}', { params: { path: { flagId: flag.id }, header: { 'If-Match': etag } }, body })));

  const editable = session.canWrite && !flag.locked;
  const change = async (body: Update) => {
    setProblem(null);
    setSaved(false);
    try {
      await patch(body);
      setSaved(true);
    } catch (error) {
      setProblem(error as ApiProblem);
    }
  };

  const save = (event: FormEvent) => {
    event.preventDefault();
    if (value.problem) return;
    const body: Update = {};
    if (name !== flag.name) body.name = name;
    if ((description || null) !== flag.description) body.description = description || null;
    if (JSON.stringify(value.value) !== JSON.stringify(flag.value)) {
      body.type = flag.type;
      body.value = value.value as never;
    }
    if (runtime !== flag.runtime) body.runtime = runtime;
    if (reviewRequired) {
      propose({ ...stateOf(flag), name, description: description || null, value: value.value as never, runtime }, title);
      return;
    }
    void change(body);
  };

  /** Under review: a change request of this flag's proposed state (null: deleted), titled by the person or for them. */
  const propose = (after: FlagState | null, fallbackTitle: string) => {
    setProblem(null);
    setSaved(false);
    requestReview(flag.key, after, title.trim() || fallbackTitle).catch((error: ApiProblem) => setProblem(error));
  };

  const remove = async () => {
    setConfirmDelete(false);
    if (reviewRequired) return propose(null, `Delete ${flag.key}`);
    try {
      await ok(api.DELETE('/v1/flags/{flagId}', { params: { path: { flagId: flag.id }, header: { 'If-Match': current.etag } } }));
      navigate('/flags');
    } catch (error) {
      if ((error as ApiProblem).code === 'FLAG_CHANGED') setConflict('refused');
      setProblem(error as ApiProblem);
    }
  };

  const fieldError = (field: string) => (problem?.field() === field ? problem.message : undefined);
  const fields = ['name', 'description', 'value', 'type', 'runtime', ...(reviewRequired ? ['title'] : [])];
  return (
    <Layout title={flag.key}>
      <p className="meta">
        {flag.type} flag · {flag.archived ? 'archived: not served to game servers' : 'served to game servers'}
        {flag.rules && flag.rules.length > 0 ? ` · ${flag.rules.length} targeting rules` : ''}
      </p>
      {conflict && (
        <p className="notice warning" role={conflict === 'refused' ? 'alert' : 'status'}>
          {conflict === 'refused'
            ? 'Not saved: someone else changed this flag after you opened it, and saving would have overwritten their change.'
            : 'This flag was changed elsewhere while you were editing it.'}{' '}
          <button type="button" onClick={showLatest}>
            Show the latest (discard my edits)
          </button>
        </p>
      )}
      {flag.locked && (
        <p className="notice warning" role="note">
          <strong>Locked.</strong> {LOCKED_REASON}
        </p>
      )}
      {!session.canWrite && <p className="notice">Your role ({session.organization?.role}) may read flags but not change them.</p>}
      <form onSubmit={save} noValidate className="flag-form">
        <Field label="Name" error={fieldError('name')}>
          {(props) => <input {...props} value={name} disabled={!editable} onChange={(event) => setName(event.target.value)} />}
        </Field>
        <Field label="Description" error={fieldError('description')}>
          {(props) => (
            <textarea {...props} rows={2} value={description} disabled={!editable} onChange={(event) => setDescription(event.target.value)} />
          )}
        </Field>
        <Field label="Value" help={flag.type === 'json' ? JSON_HELP : undefined} error={value.problem ?? fieldError('value') ?? fieldError('type')}>
          {(props) => (
            <ValueEditor
              id={props.id}
              describedBy={props['aria-describedby']}
              type={flag.type as FlagType}
              value={value.value}
              disabled={!editable || flag.archived}
              onChange={setValue}
            />
          )}
        </Field>
        <Field label="Runtime" help={RUNTIME_HELP} error={fieldError('runtime')}>
          {(props) => (
            <select {...props} value={runtime} disabled={!editable} onChange={(event) => setRuntime(event.target.value as 'shared' | 'server')}>
              <option value="shared">shared: servers and players</option>
              <option value="server">server: game servers only</option>
            </select>
          )}
        </Field>
        {reviewRequired && session.canWrite && <RequestTitleField value={title} onChange={setTitle} error={fieldError('title')} />}
        <FormError message={problem && problem.code !== 'FLAG_CHANGED' && !fields.includes(problem.field() ?? '') ? problem.explain() : null} />
        {saved && (
          <p className="saved" role="status">
            Saved.
          </p>
        )}
        {session.canWrite && (
          <div className="actions">
            <button type="submit" className="primary" disabled={!editable || value.problem !== null}>
              {reviewRequired ? 'Request review' : 'Save changes'}
            </button>
            <button
              type="button"
              onClick={() =>
                reviewRequired
                  ? propose({ ...stateOf(flag), archived: !flag.archived }, `${flag.archived ? 'Unarchive' : 'Archive'} ${flag.key}`)
                  : void change({ archived: !flag.archived })
              }
            >
              {reviewRequired ? `Request ${flag.archived ? 'unarchive' : 'archive'}` : flag.archived ? 'Unarchive' : 'Archive'}
            </button>
            <button type="button" className="danger" onClick={() => setConfirmDelete(true)}>
              Delete
            </button>
          </div>
        )}
      </form>
      <RulesEditor
        key={`rules-${flag.id}-${fresh}`}
        flag={flag}
        editable={editable && !flag.archived}
        save={async (rules) => {
          if (!reviewRequired) return patch({ rules: rules as never });
          const { rules: _stored, ...rest } = stateOf(flag);
          await requestReview(
            flag.key,
            { ...rest, ...(rules.length > 0 ? { rules: rules as never } : {}) },
            title.trim() || `Targeting rules of ${flag.key}`,
          );
          return flag;
        }}
        saveLabel={reviewRequired ? 'Request review of the rules' : 'Save rules'}
        onShowLatest={showLatest}
      />
      <Schedules
        key={`${flag.id}-${flag.updatedAt}`}
        flag={flag}
        canWrite={session.canWrite}
        unavailable={
          reviewRequired ? 'This organization requires review: changes are not scheduled here but made through change requests.' : undefined
        }
      />
      <History
        flag={flag}
        write={write}
        onShowLatest={showLatest}
        propose={reviewRequired ? (after, fallback) => propose(after, fallback) : undefined}
      />
      <ConfirmDialog
        open={confirmDelete}
        title={`Delete flag ${flag.key}?`}
        confirm={reviewRequired ? `Request deletion of ${flag.key}` : `Delete ${flag.key}`}
        onConfirm={() => void remove()}
        onCancel={() => setConfirmDelete(false)}
      >
        <p>
          Game servers stop receiving <code>{flag.key}</code> and its key becomes free. Its history stays in the audit log. To keep it, archive it
          instead.
        </p>
      </ConfirmDialog>
    </Layout>
  );
}
