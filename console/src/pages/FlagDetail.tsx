import { type FormEvent, useCallback, useEffect, useState } from 'react';
import { api, ApiProblem, ok } from '../api/client';
import { useOrganizationEvents } from '../api/events';
import type { components } from '../../.generated/api';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { Field, FormError } from '../components/Field';
import { History } from '../components/History';
import { Layout } from '../components/Layout';
import { RulesEditor } from '../components/RulesEditor';
import { Schedules } from '../components/Schedules';
import { JSON_HELP, ValueEditor } from '../components/ValueEditor';
import type { FlagType } from '../lib/flag-values';
import { Link, navigate } from '../router';
import { useSignedIn } from '../session';
import { LOCKED_REASON } from './Flags';

type Flag = components['schemas']['FeatureFlagDto'];
type Update = components['schemas']['UpdateFlagDto'];

/** One flag: edit its name, description, value and runtime; archive, unarchive or delete it. */
export function FlagDetail({ id }: { id: string }) {
  const session = useSignedIn();
  const [flag, setFlag] = useState<Flag | null>(null);
  const [loadProblem, setLoadProblem] = useState<ApiProblem | null>(null);
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [value, setValue] = useState<{ value: unknown; problem: string | null }>({ value: null, problem: null });
  const [runtime, setRuntime] = useState<'shared' | 'server'>('shared');
  const [problem, setProblem] = useState<ApiProblem | null>(null);
  const [saved, setSaved] = useState(false);
  const [confirmDelete, setConfirmDelete] = useState(false);

  const show = useCallback((next: Flag) => {
    setFlag(next);
    setName(next.name);
    setDescription(next.description ?? '');
    setValue({ value: next.value, problem: null });
    setRuntime(next.runtime);
  }, []);

  useEffect(() => {
    ok(api.GET('/v1/flags/{flagId}', { params: { path: { flagId: id } } })).then(show, (error: ApiProblem) => setLoadProblem(error));
  }, [id, show]);

  // Changed elsewhere: shown at once unless this form holds unsaved edits, which are never overwritten.
  const [changedElsewhere, setChangedElsewhere] = useState(false);
  const dirty =
    flag !== null &&
    (name !== flag.name ||
      description !== (flag.description ?? '') ||
      runtime !== flag.runtime ||
      JSON.stringify(value.value) !== JSON.stringify(flag.value));
  useOrganizationEvents((event) => {
    if (event.type !== 'flags' || !event.flagIds.includes(id)) return;
    ok(api.GET('/v1/flags/{flagId}', { params: { path: { flagId: id } } })).then(
      (next) => {
        if (dirty) setChangedElsewhere(true);
        else show(next);
      },
      (error: ApiProblem) => setLoadProblem(error),
    );
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
  if (!flag) return <Layout title="Flag">{null}</Layout>;

  const editable = session.canWrite && !flag.locked;
  const change = async (body: Update) => {
    setProblem(null);
    setSaved(false);
    try {
      show(await ok(api.PATCH('/v1/flags/{flagId}', { params: { path: { flagId: flag.id } }, body })));
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
    void change(body);
  };

  const remove = async () => {
    setConfirmDelete(false);
    try {
      await ok(api.DELETE('/v1/flags/{flagId}', { params: { path: { flagId: flag.id } } }));
      navigate('/flags');
    } catch (error) {
      setProblem(error as ApiProblem);
    }
  };

  const fieldError = (field: string) => (problem?.field() === field ? problem.message : undefined);
  const known = ['name', 'description', 'value', 'type', 'runtime'];
  return (
    <Layout title={flag.key}>
      <p className="meta">
        {flag.type} flag · {flag.archived ? 'archived: not served to game servers' : 'served to game servers'}
        {flag.rules && flag.rules.length > 0 ? ` · ${flag.rules.length} targeting rules` : ''}
      </p>
      {changedElsewhere && (
        <p className="notice warning" role="status">
          This flag was changed elsewhere while you were editing it.{' '}
          <button
            type="button"
            onClick={() => {
              setChangedElsewhere(false);
              ok(api.GET('/v1/flags/{flagId}', { params: { path: { flagId: id } } })).then(show, () => undefined);
            }}
          >
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
        <Field label="Runtime" error={fieldError('runtime')}>
          {(props) => (
            <select {...props} value={runtime} disabled={!editable} onChange={(event) => setRuntime(event.target.value as 'shared' | 'server')}>
              <option value="shared">shared</option>
              <option value="server">server</option>
            </select>
          )}
        </Field>
        <FormError message={problem && !known.includes(problem.field() ?? '') ? problem.explain() : null} />
        {saved && (
          <p className="saved" role="status">
            Saved.
          </p>
        )}
        {session.canWrite && (
          <div className="actions">
            <button type="submit" className="primary" disabled={!editable || value.problem !== null}>
              Save changes
            </button>
            <button type="button" onClick={() => void change({ archived: !flag.archived })}>
              {flag.archived ? 'Unarchive' : 'Archive'}
            </button>
            <button type="button" className="danger" onClick={() => setConfirmDelete(true)}>
              Delete
            </button>
          </div>
        )}
      </form>
      <RulesEditor key={`rules-${flag.id}`} flag={flag} editable={editable && !flag.archived} onSaved={show} />
      <Schedules key={`${flag.id}-${flag.updatedAt}`} flag={flag} canWrite={session.canWrite} />
      <History
        flagId={flag.id}
        onRestored={() => void ok(api.GET('/v1/flags/{flagId}', { params: { path: { flagId: flag.id } } })).then(show, () => undefined)}
      />
      <ConfirmDialog
        open={confirmDelete}
        title={`Delete flag ${flag.key}?`}
        confirm={`Delete ${flag.key}`}
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
