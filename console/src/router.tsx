import { type AnchorHTMLAttributes, type MouseEvent, useEffect, useState } from 'react';

/** The console's routes, under /console: history API navigation without a page load. */
export const BASE = '/console';

export type Route =
  | { name: 'flags' }
  | { name: 'new-flag' }
  | { name: 'flag'; id: string }
  | { name: 'sign-in' }
  | { name: 'organization' }
  | { name: 'audit' }
  | { name: 'storage' }
  | { name: 'promote' }
  | { name: 'served' }
  | { name: 'change-requests' }
  | { name: 'change-request'; id: string }
  | { name: 'webhooks' }
  | { name: 'webhook'; id: string }
  | { name: 'invitation'; token: string }
  | { name: 'forgot-password' }
  | { name: 'password-reset'; token: string }
  | { name: 'verify-email'; token: string }
  | { name: 'not-found' };

export function routeOf(pathname: string): Route {
  const path = pathname.startsWith(BASE) ? pathname.slice(BASE.length) : pathname;
  const parts = path.split('/').filter(Boolean);
  if (parts.length === 0 || (parts.length === 1 && parts[0] === 'flags')) return { name: 'flags' };
  if (parts.length === 1 && parts[0] === 'sign-in') return { name: 'sign-in' };
  if (parts.length === 1 && parts[0] === 'organization') return { name: 'organization' };
  if (parts.length === 1 && parts[0] === 'audit') return { name: 'audit' };
  if (parts.length === 1 && parts[0] === 'storage') return { name: 'storage' };
  if (parts.length === 1 && parts[0] === 'promote') return { name: 'promote' };
  if (parts.length === 1 && parts[0] === 'served') return { name: 'served' };
  if (parts.length === 1 && parts[0] === 'change-requests') return { name: 'change-requests' };
  if (parts.length === 2 && parts[0] === 'change-requests') return { name: 'change-request', id: decodeURIComponent(parts[1]) };
  if (parts.length === 1 && parts[0] === 'webhooks') return { name: 'webhooks' };
  if (parts.length === 2 && parts[0] === 'webhooks') return { name: 'webhook', id: decodeURIComponent(parts[1]) };
  if (parts.length === 2 && parts[0] === 'invitations') return { name: 'invitation', token: decodeURIComponent(parts[1]) };
  if (parts.length === 1 && parts[0] === 'password-reset') return { name: 'forgot-password' };
  if (parts.length === 2 && parts[0] === 'password-reset') return { name: 'password-reset', token: decodeURIComponent(parts[1]) };
  if (parts.length === 2 && parts[0] === 'verify-email') return { name: 'verify-email', token: decodeURIComponent(parts[1]) };
  if (parts.length === 2 && parts[0] === 'flags' && parts[1] === 'new') return { name: 'new-flag' };
  if (parts.length === 2 && parts[0] === 'flags') return { name: 'flag', id: decodeURIComponent(parts[1]) };
  return { name: 'not-found' };
}

const listeners = new Set<() => void>();

export function navigate(to: string, options: { replace?: boolean } = {}): void {
  const url = to.startsWith(BASE) ? to : `${BASE}${to}`;
  if (options.replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  for (const listener of listeners) listener();
}

/** The current location (path and query), re-rendering on navigation and on the browser's back and forward. */
export function useLocation(): { pathname: string; search: URLSearchParams } {
  const [, setTick] = useState(0);
  useEffect(() => {
    const update = () => setTick((tick) => tick + 1);
    listeners.add(update);
    window.addEventListener('popstate', update);
    return () => {
      listeners.delete(update);
      window.removeEventListener('popstate', update);
    };
  }, []);
  return { pathname: location.pathname, search: new URLSearchParams(location.search) };
}

/** A link that navigates inside the console (a real href, so it opens in a new tab too). */
export function Link({ to, ...props }: AnchorHTMLAttributes<HTMLAnchorElement> & { to: string }) {
  const href = to.startsWith(BASE) ? to : `${BASE}${to}`;
  const onClick = (event: MouseEvent<HTMLAnchorElement>) => {
    if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(href);
  };
  return <a {...props} href={href} onClick={onClick} />;
}
