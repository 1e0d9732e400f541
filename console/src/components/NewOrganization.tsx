import { type FormEvent, useEffect, useId, useRef, useState } from 'react';
import { api, ApiProblem, ok } from '../api/client';
import { useSignedIn } from '../session';
import { Field, FormError } from './Field';
import { announceOnNextPage } from './page-notice';

/**
 * "New organization", opened from the organization switcher when the deployment lets this person create one: a name,
 * and optionally the organization whose members (with their roles) join it, among those they administer. Once made,
 * the console switches to it.
 */
export function NewOrganizationDialog({ onClose }: { onClose: () => void }) {
  const session = useSignedIn();
  const dialog = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  const administered = session.organizations.filter((org) => org.role === 'admin');
  const [name, setName] = useState('');
  const [copyFrom, setCopyFrom] = useState('');
  const [problem, setProblem] = useState<ApiProblem | null>(null);
  const [busy, setBusy] = useState(false);
  const { created, limit } = session.organizationCreation;
  const left = limit - created;

  useEffect(() => {
    const element = dialog.current;
    if (element && !element.open) element.showModal();
  }, []);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (busy) return;
    setBusy(true);
    setProblem(null);
    try {
      const body = { name: name.trim(), ...(copyFrom ? { copyMembersFrom: copyFrom } : {}) };
      const organization = await ok(api.POST('/v1/organizations', { body }));
      const source = administered.find((org) => org.id === copyFrom);
      onClose();
      await session.reload(organization.id);
      announceOnNextPage(
        source
          ? `Created “${organization.name}” with the members of “${source.name}”. You are working in it now.`
          : `Created “${organization.name}”. You are working in it now.`,
      );
    } catch (error) {
      setProblem(error as ApiProblem);
      setBusy(false);
    }
  };

  const field = problem?.field();
  return (
    <dialog ref={dialog} aria-labelledby={titleId} onCancel={onClose} onClose={onClose}>
      <form onSubmit={submit}>
        <h2 id={titleId}>New organization</h2>
        <p className="meta">
          You will be its admin. It starts without flags, files or keys, with the free flag allowance.{' '}
          {left === 1 ? 'This is the last organization you may create.' : `You may create ${left} more organizations.`}
        </p>
        <Field label="Name" error={field === 'name' ? problem?.explain() : null} help="For example “Acme Games (staging)”.">
          {(props) => <input {...props} value={name} required maxLength={200} autoFocus onChange={(event) => setName(event.target.value)} />}
        </Field>
        <Field
          label="Copy members from"
          error={field === 'copyMembersFrom' ? problem?.explain() : null}
          help="Its members join the new organization with the same roles; nobody has to sign up again."
        >
          {(props) => (
            <select {...props} value={copyFrom} onChange={(event) => setCopyFrom(event.target.value)}>
              <option value="">Nobody: just me</option>
              {administered.map((org) => (
                <option key={org.id} value={org.id}>
                  {org.name}
                </option>
              ))}
            </select>
          )}
        </Field>
        <FormError message={problem && field !== 'name' && field !== 'copyMembersFrom' ? problem.explain() : null} />
        <div className="actions">
          <button type="submit" className="primary" disabled={busy}>
            {busy ? 'Creating…' : 'Create organization'}
          </button>
          <button type="button" onClick={onClose}>
            Cancel
          </button>
        </div>
      </form>
    </dialog>
  );
}

/**
 * The page of someone signed in who is a member of no organization (ORGANIZATION_CREATION=anyone, or their last one
 * was deleted): their first organization, when they may create one, or whom to ask.
 */
export function NoOrganization() {
  const session = useSignedIn();
  const [creating, setCreating] = useState(false);
  return (
    <main id="main">
      <h1>No organization yet</h1>
      <p>
        You are signed in as {session.user.email}, but you are not a member of any organization.{' '}
        {session.organizationCreation.allowed ? 'Create your own, or ask an admin to invite you.' : 'Ask an admin to invite you.'}
      </p>
      <div className="actions">
        {session.organizationCreation.allowed && (
          <button type="button" className="primary" onClick={() => setCreating(true)}>
            New organization
          </button>
        )}
        <button type="button" onClick={() => void session.signOut()}>
          Sign out
        </button>
      </div>
      {creating && <NewOrganizationDialog onClose={() => setCreating(false)} />}
    </main>
  );
}
