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

/** The resource-store symbols (one per enabled storage) a promise and a timer made now carry. */
function storeSymbols(): symbol[] {
  return freshResources().flatMap((resource) => Object.getOwnPropertySymbols(resource).filter((symbol) => symbol.description === RESOURCE_STORE));
}

/**
 * The test runner's own storages: jest-circus 30 runs every hook and test inside an AsyncLocalStorage of its own
 * (its test execution context), so whatever a test makes carries that one. Read before each test, before the test
 * or the code it runs can enter one.
 */
let runnerSymbols = new Set<symbol>();
beforeEach(() => {
  runnerSymbols = new Set(storeSymbols());
});

/**
 * Whether any AsyncLocalStorage of the process, whoever made it, but for the test runner's own, copies its context
 * into the async resources created now: the same property as above, found by its symbol's description rather than
 * through the storage.
 */
export function anyContextPropagates(): boolean {
  return storeSymbols().some((symbol) => !runnerSymbols.has(symbol));
}

/**
 * Whether `storage` works by copying into async resources at all: so on Node 20 and 22. Node 24 backs
 * AsyncLocalStorage with AsyncContextFrame, which gives resources nothing of their own (no per-poll cost to find).
 */
export function copiesIntoResources(storage: AsyncLocalStorage<unknown>): boolean {
  return (storage as unknown as { kResourceStore?: symbol }).kResourceStore !== undefined;
}
