import { randomBytes } from 'node:crypto';

/**
 * The service a scenario test (test/fixtures/sdk/SCENARIOS.md) talks to: the one FLAGSTORE_URL and FLAGSTORE_KEY name
 * (`npm run test:sdk-scenarios`, which starts one through scripts/with-flagstore.mjs when they are not set), or, inside
 * `npm test`, the real app in-process on a real port, with a fresh subscribed organization for each test. Either way
 * only HTTP is used: what the test does, another SDK's test can do the same way.
 */
export interface ScenarioTarget {
  /** The API's base URL, ending in /v1. */
  readonly baseUrl: string;
  /** A key with FLAGS_READ and FLAGS_WRITE in an organization with a subscription. */
  readonly key: string;
  /** The service's ADMIN_TOKEN, when known: scenarios 2 and 3 then make organizations and keys of their own. */
  readonly adminToken: string | undefined;
  /** Where it comes from, for the test names. */
  readonly kind: 'FLAGSTORE_URL' | 'in-process';
}

/** Call inside `describe`; read the answer's fields inside tests and hooks (in-process, they are filled in by hooks). */
export function useScenarioTarget(): ScenarioTarget {
  const { FLAGSTORE_URL, FLAGSTORE_KEY, FLAGSTORE_ADMIN_TOKEN } = process.env;
  if (FLAGSTORE_URL && FLAGSTORE_KEY) {
    return { baseUrl: FLAGSTORE_URL.replace(/\/+$/, ''), key: FLAGSTORE_KEY, adminToken: FLAGSTORE_ADMIN_TOKEN || undefined, kind: 'FLAGSTORE_URL' };
  }
  // Loaded only here: the standalone run needs neither the app nor a database of its own.
  const { useTestApp } = require('../../../test/support/test-suite') as typeof import('../../../test/support/test-suite');
  const { TEST_ADMIN_TOKEN } = require('../../../test/support/test-app') as typeof import('../../../test/support/test-app');
  const { t, org } = useTestApp({ subscribed: true });
  return {
    get baseUrl() {
      return t.config.urls.baseUrl;
    },
    get key() {
      return org.key;
    },
    adminToken: TEST_ADMIN_TOKEN,
    kind: 'in-process',
  };
}

/** A name no other run uses: flag keys and organization names of the scenarios. */
export function unique(prefix: string): string {
  return `${prefix}-${randomBytes(4).toString('hex')}`;
}

export interface Answer {
  status: number;
  headers: Headers;
  body: any;
}

/** One request of the test's own (never through the SDK), with a bearer token. */
export async function call(baseUrl: string, token: string, method: string, path: string, body?: unknown): Promise<Answer> {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = text === '' ? undefined : JSON.parse(text);
  } catch {
    // not JSON: kept as text
  }
  return { status: response.status, headers: response.headers, body: parsed };
}

async function expectStatus(answer: Promise<Answer>, status: number, what: string): Promise<any> {
  const { status: actual, body } = await answer;
  if (actual !== status) throw new Error(`${what} answered ${actual}, not ${status}: ${JSON.stringify(body)}`);
  return body;
}

export interface FlagInput {
  key: string;
  type: 'boolean' | 'string' | 'number' | 'json';
  value: unknown;
  runtime?: 'shared' | 'server';
  rules?: unknown[];
}

/** POST /flags with a FLAGS_WRITE key; the flag's id. */
export async function createFlag(baseUrl: string, key: string, flag: FlagInput): Promise<string> {
  const created = await expectStatus(call(baseUrl, key, 'POST', '/flags', { name: flag.key, ...flag }), 201, `POST /flags (${flag.key})`);
  return created.id as string;
}

export async function setFlagValue(baseUrl: string, key: string, id: string, type: FlagInput['type'], value: unknown): Promise<void> {
  await expectStatus(call(baseUrl, key, 'PATCH', `/flags/${id}`, { type, value }), 200, `PATCH /flags/${id}`);
}

export interface OwnOrganization {
  id: string;
  /** FLAGS_READ and FLAGS_WRITE. */
  writeKey: string;
}

/** With the admin token: an organization with a subscription and a key that may read and write flags. */
export async function createOrganization(baseUrl: string, adminToken: string, name: string): Promise<OwnOrganization> {
  const organization = await expectStatus(call(baseUrl, adminToken, 'POST', '/admin/organizations', { name }), 201, 'POST /admin/organizations');
  await expectStatus(call(baseUrl, adminToken, 'POST', `/admin/organizations/${organization.id}/subscriptions`, { plan: 'pro' }), 201, 'subscribing');
  const key = await createKey(baseUrl, adminToken, organization.id, ['FLAGS_READ', 'FLAGS_WRITE']);
  return { id: organization.id as string, writeKey: key.key };
}

export async function createKey(
  baseUrl: string,
  adminToken: string,
  organizationId: string,
  permissions: string[],
): Promise<{ id: string; key: string }> {
  const path = `/admin/organizations/${organizationId}/api-keys`;
  const created = await expectStatus(call(baseUrl, adminToken, 'POST', path, { name: unique('sdk-scenario'), permissions }), 201, `POST ${path}`);
  return { id: created.id as string, key: created.key as string };
}

export async function revokeKey(baseUrl: string, adminToken: string, organizationId: string, keyId: string): Promise<void> {
  const path = `/admin/organizations/${organizationId}/api-keys/${keyId}`;
  await expectStatus(call(baseUrl, adminToken, 'DELETE', path), 204, `DELETE ${path}`);
}

/** Checks `condition` every 20 ms until it holds (true) or `withinMs` has passed (false). */
export async function eventually(condition: () => boolean, withinMs: number): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  for (;;) {
    if (condition()) return true;
    if (Date.now() >= deadline) return false;
    await new Promise((done) => setTimeout(done, 20));
  }
}

export const sleep = (ms: number) => new Promise((done) => setTimeout(done, ms));
