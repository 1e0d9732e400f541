import type { AsyncLocalStorage } from 'node:async_hooks';

/** What Node 20 names the property an enabled AsyncLocalStorage gives every async resource (one per storage). */
const RESOURCE_STORE = 'kResourceStore';

/** A promise and a timer made now: the async resources a poll creates. */
function freshResources(): object[] {
  const timer = setTimeout(() => undefined, 0);
  clearTimeout(timer);
  return [Promise.resolve(), timer];
}

/**
 * Whether `storage` copies its context into the async resources created now, the cost every config poll would
 * pay: on Node 20 an enabled storage gives each new resource (a promise, a timer) an own property under its
 * `kResourceStore` symbol.
 */
export function propagatesContext(storage: AsyncLocalStorage<unknown>): boolean {
  const symbol = (storage as unknown as { kResourceStore?: symbol }).kResourceStore;
  return symbol !== undefined && freshResources().some((resource) => Object.getOwnPropertySymbols(resource).includes(symbol));
}

/**
 * Whether any AsyncLocalStorage of the process, whoever made it, copies its context into the async resources
 * created now: the same property as above, found by its symbol's description rather than through the storage.
 */
export function anyContextPropagates(): boolean {
  return freshResources().some((resource) => Object.getOwnPropertySymbols(resource).some((symbol) => symbol.description === RESOURCE_STORE));
}

/**
 * Whether `storage` works by copying into async resources at all: so on Node 20 and 22. Node 24 backs
 * AsyncLocalStorage with AsyncContextFrame, which gives resources nothing of their own (no per-poll cost to find).
 */
export function copiesIntoResources(storage: AsyncLocalStorage<unknown>): boolean {
  return (storage as unknown as { kResourceStore?: symbol }).kResourceStore !== undefined;
}
