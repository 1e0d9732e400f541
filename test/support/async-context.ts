import type { AsyncLocalStorage } from 'node:async_hooks';

/**
 * Whether `storage` copies its context into the async resources created now, the cost every config poll would
 * pay: on Node 20 an enabled storage gives each new resource (a promise, a timer) an own property under its
 * `kResourceStore` symbol.
 */
export function propagatesContext(storage: AsyncLocalStorage<unknown>): boolean {
  const symbol = (storage as unknown as { kResourceStore?: symbol }).kResourceStore;
  const timer = setTimeout(() => undefined, 0);
  clearTimeout(timer);
  return symbol !== undefined && [Promise.resolve(), timer].some((resource) => Object.getOwnPropertySymbols(resource).includes(symbol));
}
