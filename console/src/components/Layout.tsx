import type { ReactNode } from 'react';
import { Link } from '../router';
import { useSignedIn } from '../session';
import { NewOrganization } from './NewOrganization';

/**
 * The frame of every signed-in page: the organization switcher (with "New organization" when this person may create one),
 * the navigation, who is signed in, and sign-out.
 */
export function Layout({ title, children }: { title: string; children: ReactNode }) {
  const session = useSignedIn();
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
          <Link to="/promote">Promote</Link>
          <Link to="/organization">People and keys</Link>
        </nav>
        <div className="who">
          {session.organizations.length > 1 ? (
            <select aria-label="Organization" value={session.organization?.id} onChange={(event) => session.switchOrganization(event.target.value)}>
              {session.organizations.map((org) => (
                <option key={org.id} value={org.id}>
                  {org.name}
                </option>
              ))}
            </select>
          ) : (
            <span>{session.organization?.name ?? 'No organization yet'}</span>
          )}
          <span className="role">{session.organization?.role}</span>
          <NewOrganization />
          <span>{session.user.name}</span>
          <button type="button" onClick={() => void session.signOut()}>
            Sign out
          </button>
        </div>
      </header>
      <main id="main" tabIndex={-1}>
        <h1>{title}</h1>
        {children}
      </main>
    </>
  );
}
