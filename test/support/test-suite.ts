import { createOrganization, subscribe, TestOrganization } from '../factories/organizations.factory';
import type { Clock } from '../../src/common/clock';
import { createTestApp, TestApp } from './test-app';

export interface TestSuiteOptions {
  /** Give each test's organization a subscription (room past the free allowance). */
  subscribed?: boolean;
  /** Configuration overrides, as environment variables would give them. */
  env?: Record<string, string>;
  /** Serve the config poll in front of Express, as production does. */
  leanConfigPoll?: boolean;
  /** The app's clock (a FakeClock), for tests that move time. */
  clock?: Clock;
}

/**
 * The setup most e2e files share: one app for the whole file, closed after it, and a fresh organization (with
 * a key that may do everything) before each test. Call it inside `describe`; the objects it returns are
 * filled in by those hooks, so read them inside tests and hooks, not at describe time.
 */
export function useTestApp(options: TestSuiteOptions = {}): { t: TestApp; org: TestOrganization } {
  const t = {} as TestApp;
  const org = {} as TestOrganization;
  beforeAll(async () => {
    Object.assign(t, await createTestApp(options.env, { leanConfigPoll: options.leanConfigPoll, clock: options.clock }));
  });
  afterAll(() => t.close?.());
  beforeEach(async () => {
    Object.assign(org, await createOrganization(t));
    if (options.subscribed) await subscribe(t, org.id);
  });
  return { t, org };
}
