import { useEffect, useRef } from 'react';

/** What GET /v1/events tells: notifications, after which the console reads what changed through the API. */
export type OrganizationEvent =
  | { type: 'flags'; flagIds: string[] }
  | { type: 'storage'; ids: string[]; change: 'uploaded' | 'deleted' | 'purged' }
  | { type: 'review-setting'; id: string }
  | { type: 'change-requests'; ids: string[] };

type Listener = (event: OrganizationEvent) => void;
const listeners = new Set<Listener>();
let source: EventSource | undefined;
let organization: string | undefined;

/**
 * Listens to the organization's event stream (one EventSource for the whole console, reopened when the organization
 * changes; the browser reconnects it by itself when it drops). Null stops listening (signed out).
 */
export function listenTo(organizationId: string | null): void {
  if (organizationId === organization) return;
  source?.close();
  source = undefined;
  organization = organizationId ?? undefined;
  if (!organizationId) return;
  source = new EventSource(`/v1/events?organizationId=${encodeURIComponent(organizationId)}`);
  for (const type of ['flags', 'storage', 'review-setting', 'change-requests'] as const) {
    source.addEventListener(type, (message) => {
      const event = { type, ...JSON.parse((message as MessageEvent<string>).data) } as OrganizationEvent;
      for (const listener of listeners) listener(event);
    });
  }
}

/** Calls `handler` on every event of the organization while the component is mounted. */
export function useOrganizationEvents(handler: Listener): void {
  const current = useRef(handler);
  current.current = handler;
  useEffect(() => {
    const listener: Listener = (event) => current.current(event);
    listeners.add(listener);
    return () => {
      listeners.delete(listener);
    };
  }, []);
}
