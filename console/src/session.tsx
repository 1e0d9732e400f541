import { createContext, type ReactNode, useCallback, useContext, useEffect, useMemo, useState } from 'react';
import { api, ok, setCredentials, whenSignedOut } from './api/client';
import { listenTo } from './api/events';
import type { components } from '../.generated/api';
import { navigate } from './router';

export type SessionBody = components['schemas']['SessionDto'];
export type Role = SessionBody['organizations'][number]['role'];

export interface Session {
  user: SessionBody['user'];
  organizations: SessionBody['organizations'];
  organization: SessionBody['organizations'][number] | undefined;
  /** What the role may do: editors and admins change flags and files; admins also people and keys. */
  canWrite: boolean;
  isAdmin: boolean;
  /** Whether "New organization" would work now (ORGANIZATION_CREATION, ORGANIZATIONS_PER_USER), and why not. */
  organizationCreation: SessionBody['organizationCreation'];
  /**
   * Moves to another of the person's organizations, on its flag list or on `path` there (a change request made from
   * elsewhere); `replace` stays on the same history entry (a link's `?org=` taken in).
   */
  switchOrganization(id: string, path?: string, options?: { replace?: boolean }): void;
  /**
   * Reads the session again after the person's organizations changed (one created, renamed, deleted), staying in the
   * current organization or moving to `switchTo`; one that is gone falls back to the first.
   */
  reload(switchTo?: string): Promise<void>;
  signOut(): Promise<void>;
}

const SessionContext = createContext<Session | null | undefined>(undefined);
/** How the sign-in page hands over a new session: there is no Session to call it on before one exists. */
const SignedInContext = createContext<(body: SessionBody) => void>(() => undefined);
/** The organization a person last worked in: not secret (the session decides what they may see), so kept across visits. */
const LAST_ORGANIZATION = 'flagstore.organization';

/** Reads the session once (GET /v1/auth/session), keeps the CSRF token in memory only, and sends people to sign-in on a 401. */
export function SessionProvider({ children }: { children: ReactNode }) {
  const [body, setBody] = useState<SessionBody | null | undefined>(undefined);
  const [organizationId, setOrganizationId] = useState<string | undefined>(undefined);

  const signedIn = useCallback((next: SessionBody) => {
    const remembered = localStorage.getItem(LAST_ORGANIZATION);
    const chosen = next.organizations.find((org) => org.id === remembered) ?? next.organizations[0];
    setCredentials({ organizationId: chosen?.id, csrfToken: next.csrfToken });
    setOrganizationId(chosen?.id);
    setBody(next);
  }, []);

  useEffect(() => {
    whenSignedOut(() => {
      setCredentials({});
      setBody(null);
      const here = `${location.pathname}${location.search}`;
      if (!location.pathname.endsWith('/sign-in')) navigate(`/sign-in?returnTo=${encodeURIComponent(here)}`, { replace: true });
    });
    ok(api.GET('/v1/auth/session'), { signInOn401: false }).then(signedIn, () => setBody(null));
  }, [signedIn]);

  // Changes made by anyone else reach the pages through the organization's event stream.
  useEffect(() => listenTo(body ? (organizationId ?? null) : null), [body, organizationId]);

  const session = useMemo<Session | null | undefined>(() => {
    if (!body) return body;
    const organization = body.organizations.find((org) => org.id === organizationId);
    return {
      user: body.user,
      organizations: body.organizations,
      organization,
      canWrite: organization?.role === 'editor' || organization?.role === 'admin',
      isAdmin: organization?.role === 'admin',
      organizationCreation: body.organizationCreation,
      async reload(switchTo) {
        const next = await ok(api.GET('/v1/auth/session'));
        const stay = switchTo ?? organizationId;
        if (stay) localStorage.setItem(LAST_ORGANIZATION, stay);
        signedIn(next);
        if (switchTo) navigate('/flags');
      },
      switchOrganization(id, path = '/flags', options = {}) {
        localStorage.setItem(LAST_ORGANIZATION, id);
        setCredentials({ organizationId: id, csrfToken: body.csrfToken });
        setOrganizationId(id);
        navigate(path, options);
      },
      async signOut() {
        await ok(api.POST('/v1/auth/logout'), { signInOn401: false }).catch(() => undefined);
        setCredentials({});
        setBody(null);
        navigate('/sign-in', { replace: true });
      },
    };
  }, [body, organizationId, signedIn]);

  return (
    <SignedInContext.Provider value={signedIn}>
      <SessionContext.Provider value={session}>{children}</SessionContext.Provider>
    </SignedInContext.Provider>
  );
}

/** The session: undefined while it is being read, null when nobody is signed in. */
export function useSession(): Session | null | undefined {
  const session = useContext(SessionContext);
  return session;
}

/** What the sign-in page calls with the session it opened. */
export function useSignedInCallback(): (body: SessionBody) => void {
  return useContext(SignedInContext);
}

/** The session of a page that is only shown to someone signed in. */
export function useSignedIn(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error('useSignedIn outside a signed-in page');
  return session;
}
