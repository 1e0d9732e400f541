/**
 * What the page shown next should say about a change that took the person away from where they made it (an
 * organization created or deleted). A Layout that mounts takes it; one already shown (the page did not change) hears
 * it; either way it is said once, until the person goes elsewhere.
 */
let pending: string | null = null;
const listeners = new Set<(notice: string) => void>();

export function announceOnNextPage(notice: string): void {
  pending = notice;
  for (const listener of listeners) listener(notice);
}

/** The notice waiting to be said (a Layout mounting): it is then said by this one only. */
export function takeNotice(): string | null {
  const notice = pending;
  pending = null;
  return notice;
}

/** The notice is on screen: no Layout mounting later says it again. */
export function noticeShown(notice: string): void {
  if (pending === notice) pending = null;
}

export function onNotice(listener: (notice: string) => void): () => void {
  listeners.add(listener);
  return () => {
    listeners.delete(listener);
  };
}
