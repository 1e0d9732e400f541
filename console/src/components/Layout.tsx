import { type ReactNode, useEffect, useState } from 'react';
import { useAwaitingMe } from '../api/review';
import { Link } from '../router';
import { useSignedIn } from '../session';
import { NewOrganizationDialog } from './NewOrganization';
import { noticeShown, onNotice, takeNotice } from './page-notice';

/** The switcher's entry that opens the "New organization" form instead of switching. */
const NEW_ORGANIZATION = 'new-organization';

/**
 * The frame of every signed-in page: the organization switcher (whose last entry, "New organization…", is there when
 * this person may create one), the navigation, who is signed in, and sign-out.
 */
export function Layout({ title, children }: { title: string; children: ReactNode }) {
  const session = useSignedIn();
  const [creating, setCreating] = useState(false);
  const [notice, setNotice] = useState<string | null>(takeNotice);
  useEffect(() => onNotice(setNotice), []);
  useEffect(() => {
    if (notice !== null) noticeShown(notice);
  }, [notice]);
  const canCreate = session.organizationCreation.allowed;
  const awaiting = useAwaitingMe();
  return (
    <>
      <a className="skip" href="#main">
        Skip to content
      </a>
      <header className="top">
        <Link to="/flags" className="brand">
          Flagstore
        </Link>
        <nav aria-label="Main">
          <Link to="/flags">Flags</Link>
          <Link to="/served">What servers receive</Link>
          <Link to="/audit">Audit log</Link>
          <Link to="/storage">Storage</Link>
          <Link to="/change-requests">
            Change requests
            {awaiting !== null && awaiting > 0 && (
              <span className="badge" title={`${awaiting} awaiting your review`}>
                {awaiting}
                <span className="visually-hidden"> awaiting your review</span>
              </span>
            )}
          </Link>
          <Link to="/promote">Promote</Link>
          <Link to="/organization">People and keys</Link>
          {session.isAdmin && <Link to="/webhooks">Webhooks</Link>}
        </nav>
        <div className="who">
          {session.organizations.length > 1 || canCreate ? (
            <select
              aria-label="Organization"
              value={session.organization?.id ?? ''}
              onChange={(event) => {
                if (event.target.value === NEW_ORGANIZATION) setCreating(true);
                else if (event.target.value !== '') session.switchOrganization(event.target.value);
              }}
            >
              {!session.organization && <option value="">No organization yet</option>}
              {session.organizations.map((org) => (
                <option key={org.id} value={org.id}>
                  {org.name}
                </option>
              ))}
              {canCreate && <option value={NEW_ORGANIZATION}>New organization…</option>}
            </select>
          ) : (
            <span>{session.organization?.name ?? 'No organization yet'}</span>
          )}
          <span className="role">{session.organization?.role}</span>
          <span>{session.user.name}</span>
          <button type="button" onClick={() => void session.signOut()}>
            Sign out
          </button>
        </div>
      </header>
      {creating && <NewOrganizationDialog onClose={() => setCreating(false)} />}
      <main id="main" tabIndex={-1}>
        {notice && (
          <p className="notice" role="status">
            {notice}
          </p>
        )}
        <h1>{title}</h1>
        {children}
      </main>
    </>
  );
}
