import { Fragment, useEffect } from 'react';
import { FlagDetail } from './pages/FlagDetail';
import { AuditLog } from './pages/AuditLog';
import { ChangeRequest } from './pages/ChangeRequest';
import { ChangeRequests } from './pages/ChangeRequests';
import { Flags } from './pages/Flags';
import { Invitation } from './pages/Invitation';
import { Organization } from './pages/Organization';
import { ForgotPassword, PasswordReset } from './pages/PasswordReset';
import { VerifyEmail } from './pages/VerifyEmail';
import { Promote } from './pages/Promote';
import { ServedConfig } from './pages/ServedConfig';
import { Storage } from './pages/Storage';
import { WebhookEndpointPage } from './pages/WebhookEndpoint';
import { Webhooks } from './pages/Webhooks';
import { NewFlag } from './pages/NewFlag';
import { NoOrganization } from './components/NewOrganization';
import { safeReturnTo, SignIn } from './pages/SignIn';
import { navigate, type Route, routeOf, useLocation } from './router';
import { SessionProvider, useSession } from './session';

export function App() {
  return (
    <SessionProvider>
      <Pages />
    </SessionProvider>
  );
}

const TITLES: Record<string, string> = {
  flags: 'Flags',
  'new-flag': 'New flag',
  flag: 'Flag',
  'sign-in': 'Sign in',
  organization: 'Organization',
  audit: 'Audit log',
  storage: 'Storage',
  promote: 'Promote flags',
  served: 'What servers receive',
  'change-requests': 'Change requests',
  'change-request': 'Change request',
  webhooks: 'Webhooks',
  webhook: 'Webhook endpoint',
  invitation: 'Invitation',
  'forgot-password': 'Reset your password',
  'password-reset': 'Choose a new password',
  'verify-email': 'Verify your email',
  'not-found': 'Not found',
};

/** Pages that someone not signed in may see (a mailed link's, sign-in's own). */
const ANONYMOUS_ROUTES = new Set<Route['name']>(['sign-in', 'invitation', 'forgot-password', 'password-reset', 'verify-email']);

function Pages() {
  const session = useSession();
  const { pathname, search } = useLocation();
  const route = routeOf(pathname);

  useEffect(() => {
    document.title = `${TITLES[route.name]} · Flagstore`;
  }, [route.name]);

  // Someone not signed in goes to sign-in, and comes back here afterwards.
  useEffect(() => {
    if (session === null && !ANONYMOUS_ROUTES.has(route.name)) {
      navigate(`/sign-in?returnTo=${encodeURIComponent(`${pathname}${location.search}`)}`, { replace: true });
    }
  }, [session, route.name, pathname]);

  // Signed in already (a reload of the sign-in page, a second tab): on to where the person was going.
  useEffect(() => {
    if (session && route.name === 'sign-in') navigate(safeReturnTo(search.get('returnTo')), { replace: true });
  }, [session, route.name, search]);

  // A link into one organization (a webhook message's `?org=`): there when this person is a member of it (otherwise
  // where they are), and the parameter is dropped either way, so a reload or a copied address does not switch again.
  const linkedOrganization = session ? search.get('org') : null;
  useEffect(() => {
    if (!session || linkedOrganization === null) return;
    const rest = new URLSearchParams(location.search);
    rest.delete('org');
    const here = `${location.pathname}${rest.toString() ? `?${rest}` : ''}`;
    if (session.organizations.some((org) => org.id === linkedOrganization)) session.switchOrganization(linkedOrganization, here, { replace: true });
    else navigate(here, { replace: true });
  }, [session, linkedOrganization]);

  if (session === undefined || linkedOrganization !== null) return <p className="loading">Loading…</p>;
  if (route.name === 'invitation') return <Invitation token={route.token} />;
  if (route.name === 'forgot-password') return <ForgotPassword />;
  if (route.name === 'password-reset') return <PasswordReset token={route.token} />;
  if (route.name === 'verify-email') return <VerifyEmail token={route.token} />;
  if (route.name === 'sign-in' || session === null) return <SignIn key={search.toString()} />;
  if (!session.organization) return <NoOrganization />;
  // What a page holds (its reads, filters, page number, drafts) is of one organization: another starts every page afresh.
  return <Fragment key={session.organization.id}>{pageOf(route)}</Fragment>;
}

function pageOf(route: Route) {
  switch (route.name) {
    case 'flags':
      return <Flags />;
    case 'new-flag':
      return <NewFlag />;
    case 'flag':
      return <FlagDetail key={route.id} id={route.id} />;
    case 'organization':
      return <Organization />;
    case 'audit':
      return <AuditLog />;
    case 'storage':
      return <Storage />;
    case 'promote':
      return <Promote />;
    case 'served':
      return <ServedConfig />;
    case 'change-requests':
      return <ChangeRequests />;
    case 'change-request':
      return <ChangeRequest key={route.id} id={route.id} />;
    case 'webhooks':
      return <Webhooks />;
    case 'webhook':
      return <WebhookEndpointPage key={route.id} id={route.id} />;
    default:
      return (
        <main id="main">
          <h1>Not found</h1>
          <p>
            There is no such page. <a href="/console/flags">Go to the flags</a>.
          </p>
        </main>
      );
  }
}
