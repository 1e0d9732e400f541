import { type FormEvent, useEffect, useState } from 'react';
import { api, ApiProblem, ok } from '../api/client';
import { navigate } from '../router';
import { useSignedIn } from '../session';
import { ConfirmDialog } from './ConfirmDialog';
import { Field, FormError } from './Field';
import { announceOnNextPage } from './page-notice';

/**
 * An organization's settings, for its admins: its name, and deleting it. The service deletes only an organization
 * without flags and files (409 otherwise, with a message saying how many are left), which is shown as it is.
 */
export function OrganizationSettings() {
  const session = useSignedIn();
  const organization = session.organization;
  const [name, setName] = useState(organization?.name ?? '');
  const [renameProblem, setRenameProblem] = useState<ApiProblem | null>(null);
  const [saved, setSaved] = useState(false);
  const [busy, setBusy] = useState(false);
  const [confirming, setConfirming] = useState(false);
  const [deleteProblem, setDeleteProblem] = useState<ApiProblem | null>(null);

  // Another organization chosen in the switcher: its own name, and nothing said about the previous one.
  useEffect(() => {
    setName(organization?.name ?? '');
    setSaved(false);
    setRenameProblem(null);
    setDeleteProblem(null);
  }, [organization?.id]);

  if (!organization || !session.isAdmin) return null;

  const rename = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setSaved(false);
    setRenameProblem(null);
    try {
      await ok(api.PATCH('/v1/organization', { body: { name: name.trim() } }));
      await session.reload();
      setSaved(true);
    } catch (error) {
      setRenameProblem(error as ApiProblem);
    } finally {
      setBusy(false);
    }
  };

  const remove = async () => {
    setConfirming(false);
    setSaved(false);
    setDeleteProblem(null);
    const name = organization.name;
    try {
      await ok(api.DELETE('/v1/organization'));
      await session.reload();
      announceOnNextPage(`Deleted “${name}”.`);
      // The organization is gone: reload fell back to another one (or none); start from its flags.
      navigate('/flags');
    } catch (error) {
      setDeleteProblem(error as ApiProblem);
    }
  };

  return (
    <section aria-labelledby="settings-title">
      <h2 id="settings-title">Settings</h2>
      <form className="inline-form" onSubmit={rename}>
        <Field label="Organization name" error={renameProblem?.field() === 'name' ? renameProblem.explain() : null}>
          {(props) => <input {...props} value={name} required maxLength={200} onChange={(event) => setName(event.target.value)} />}
        </Field>
        <div className="actions">
          <button type="submit" disabled={busy || name.trim() === organization.name}>
            Rename
          </button>
        </div>
      </form>
      <FormError message={renameProblem && renameProblem.field() !== 'name' ? renameProblem.explain() : null} />
      {saved && (
        <p className="saved" role="status">
          Renamed.
        </p>
      )}
      <h3>Delete this organization</h3>
      <p className="meta">Only an organization without flags and files can be deleted. Its members, invitations and API keys go with it.</p>
      <button type="button" className="danger" onClick={() => setConfirming(true)}>
        Delete organization
      </button>
      {deleteProblem && (
        <p className="error" role="alert">
          {deleteProblem.explain()}
        </p>
      )}
      <ConfirmDialog
        open={confirming}
        title={`Delete ${organization.name}?`}
        confirm="Delete organization"
        onConfirm={() => void remove()}
        onCancel={() => setConfirming(false)}
      >
        <p>
          {organization.name} and its memberships, invitations and API keys are deleted for good. Game servers using its keys are refused from their
          next request.
        </p>
      </ConfirmDialog>
    </section>
  );
}
