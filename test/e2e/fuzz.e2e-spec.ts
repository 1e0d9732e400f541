import type { IncomingMessage } from 'node:http';
import fc from 'fast-check';
import request from 'supertest';
import { createFlag } from '../factories/flags.factory';
import { Permission } from '../../src/auth/permission';
import { bearer, createApiKey, createOrganization, TestOrganization } from '../factories/organizations.factory';
import { signedUrl, uploadFile } from '../factories/storage.factory';
import { memberSignedIn, SignedIn } from '../factories/people.factory';
import { createTestApp, TEST_ADMIN_TOKEN, TestApp } from '../support/test-app';

/** Routes that take a signed-in session rather than a key; logout is left out, so the session outlives the run. */
const SESSION_ROUTE = /^\/v1\/(organization\/|auth\/(session|password)$)/;

/**
 * A seeded fuzz run over every route of the served document: odd bodies, query strings and headers (lone
 * surrogates, NUL, deep nesting, huge numbers, wrong types, wrong content types), with a valid key, the admin
 * token, a session (on the people routes), a bad key or none. No answer may be a 5xx, and every answer is checked against /docs-json by the
 * contract check like any other; /health stays green. Failing runs print the seed and path to replay them.
 */

const SEED = 20261123;
const RUNS = 4000;

type Method = 'get' | 'post' | 'patch' | 'put' | 'delete' | 'head';

/** Text that breaks things: lone surrogates, NUL, controls, escapes, huge and odd numbers, SQL and paths. */
const nastyString = fc.oneof(
  fc.string(),
  fc.string({ unit: 'grapheme' }),
  fc.constantFrom(
    '\ud800',
    'a\udc00b',
    '\u0000',
    'x\u0000y',
    '\u202e',
    '\r\n',
    '%',
    '%00',
    '%ZZ',
    '../../etc/passwd',
    "'; DROP TABLE flags; --",
    '1e309',
    '-0',
    '9'.repeat(400),
    '',
    ' ',
    'null',
    'true',
    '[]',
    '{}',
    'fsk_' + 'a'.repeat(43),
    '00000000-0000-4000-8000-000000000000',
    'W/"x"',
    '*',
    'bytes=0-',
    'bytes=-1,5-2',
  ),
);

const nastyNumber = fc.oneof(fc.integer(), fc.double(), fc.constantFrom(Number.MAX_SAFE_INTEGER + 2, 1e308, -1e308, 2 ** 63, 0.1, -0));

/** JSON with nasty leaves, sometimes nested far past any limit. */
const nastyJson: fc.Arbitrary<unknown> = fc.oneof(
  { depthSize: 'small' },
  fc.jsonValue(),
  fc.dictionary(nastyString, fc.oneof(nastyString, nastyNumber, fc.boolean(), fc.constant(null), fc.jsonValue())),
  fc.array(fc.oneof(nastyString, nastyNumber)),
  fc.integer({ min: 30, max: 3000 }).map((depth) => {
    let value: unknown = 'deep';
    for (let level = 0; level < depth; level += 1) value = level % 2 ? [value] : { v: value };
    return value;
  }),
);

/** Bodies shaped like the real ones with one field made nasty, so that validation goes past the first field. */
function nearlyValidFlag(): fc.Arbitrary<unknown> {
  return fc.record(
    {
      key: fc.oneof(fc.stringMatching(/^[a-z0-9][a-z0-9_-]{0,20}$/), nastyString),
      name: fc.oneof(fc.constant('Flag'), nastyString),
      description: fc.oneof(fc.constant(null), nastyString),
      type: fc.oneof(fc.constantFrom('boolean', 'string', 'number', 'json'), nastyString),
      value: fc.oneof(fc.boolean(), nastyString, nastyNumber, nastyJson),
      runtime: fc.oneof(fc.constantFrom('server', 'shared'), nastyString),
      archived: fc.oneof(fc.boolean(), nastyString),
    },
    { requiredKeys: [] },
  );
}

/** A flag the service accepts, so that creations, edits and the audit log are reached too. */
const validFlag = fc
  .record({
    key: fc.stringMatching(/^[a-z0-9][a-z0-9_-]{0,30}$/),
    name: fc.string({ minLength: 1, maxLength: 50 }).filter((name) => name.trim() === name && name.length > 0 && !/[\u0000\ud800-\udfff]/.test(name)),
    typed: fc.oneof(
      fc.record({ type: fc.constant('boolean'), value: fc.boolean() }),
      fc.record({ type: fc.constant('number'), value: fc.double({ noNaN: true, noDefaultInfinity: true }) }),
      fc.record({ type: fc.constant('string'), value: fc.string({ maxLength: 100 }) }),
      fc.record({ type: fc.constant('json'), value: fc.jsonValue({ maxDepth: 3 }) }),
    ),
  })
  .map(({ key, name, typed }) => ({ key, name, ...typed }));

const body = fc.oneof(
  fc.record({ kind: fc.constant('json' as const), value: fc.oneof(nastyJson, nearlyValidFlag(), validFlag) }),
  fc.record({
    kind: fc.constant('raw' as const),
    value: nastyString,
    contentType: fc.constantFrom('application/json', 'text/plain', 'application/x-www-form-urlencoded', 'application/octet-stream', 'image/png', ''),
  }),
  fc.constant({ kind: 'none' as const }),
);

const QUERY_NAMES = [
  'page',
  'limit',
  'search',
  'includeArchived',
  'flagId',
  'contentType',
  'size',
  'metadata',
  'kind',
  'signature',
  'expires',
  'nonce',
  'dryRun',
];
const query = fc.dictionary(fc.oneof(fc.constantFrom(...QUERY_NAMES), nastyString), fc.oneof(nastyString, nastyNumber.map(String)), { maxKeys: 4 });

const headers = fc.record(
  {
    'If-None-Match': nastyString,
    Range: nastyString,
    'If-Range': nastyString,
    'X-Request-Id': nastyString,
    Origin: fc.constantFrom('https://game.example.com', 'null', 'https://evil.example.net'),
  },
  { requiredKeys: [] },
);

/** Like encodeURIComponent, but a lone surrogate goes out as the (invalid) UTF-8 bytes a hostile client would send. */
const encodePathValue = (value: string) =>
  value
    .split(/([\ud800-\udfff])/)
    .map((part) => (part.length === 1 && /[\ud800-\udfff]/.test(part) ? '%ED%A0%80' : encodeURIComponent(part)))
    .join('');

/** Header values Node itself refuses to send (and no real client could): those are not the service's to judge. */
const sendable = (value: string) => /^[\t\x20-\x7e\x80-\xff]*$/.test(value);

describe('fuzzing every route', () => {
  let t: TestApp;
  let org: TestOrganization;
  let member: SignedIn;
  let ids: Record<string, string[]>;

  beforeAll(async () => {
    t = await createTestApp({
      API_RATE_LIMIT_PER_MINUTE: '1000000',
      CONFIG_RATE_LIMIT_PER_MINUTE: '1000000',
      AUTH_FAILURES_PER_MINUTE: '1000000',
      CORS_ORIGINS: 'https://game.example.com',
    });
    org = await createOrganization(t);
    member = await memberSignedIn(t, org.id, 'admin');
    const flag = await createFlag(t, org.key, { key: 'fuzz-target', type: 'json', value: { a: 1 } });
    const file = await uploadFile(t, org, Buffer.from('fuzz'));
    const preallocated = await signedUrl(t, org, { contentType: 'image/png', size: 4 });
    const form = await signedUrl(t, org);
    ids = {
      orgId: [org.id],
      organizationId: [org.id],
      // Another key of the organization: revoking the one the run uses would turn the rest of it into 401s.
      keyId: [(await createApiKey(t, org.id, [Permission.FLAGS_READ])).id],
      userId: [member.userId],
      subscriptionId: ['00000000-0000-4000-8000-000000000000'],
      flagId: [flag.id],
      fileId: [file.id],
      mediaId: [file.id, preallocated.mediaId!],
      uploads: [new URL(preallocated.url).pathname + new URL(preallocated.url).search, new URL(form.url).pathname + new URL(form.url).search],
    };
  });
  afterAll(() => t.close());

  it(`answers ${RUNS} fuzzed requests over every route without a 5xx, and stays healthy`, async () => {
    const document = (await request(t.http).get('/docs-json').expect(200)).body as { paths: Record<string, Record<string, unknown>> };
    const routes = Object.entries(document.paths).flatMap(([path, item]) => Object.keys(item).map((method) => ({ method: method as Method, path })));
    expect(routes.length).toBeGreaterThanOrEqual(24);

    const pathValue = fc.oneof(nastyString, fc.uuid(), fc.constantFrom('x', '..', '%2e%2e', '%E0%A4%A'));
    const requestArbitrary = fc.record({
      route: fc.constantFrom(...routes),
      params: fc.dictionary(
        fc.constantFrom('orgId', 'organizationId', 'keyId', 'userId', 'subscriptionId', 'flagId', 'fileId', 'mediaId'),
        fc.oneof(pathValue, fc.nat()),
      ),
      useSignedUpload: fc.boolean(),
      query,
      headers,
      body,
      // Mostly the credential the route takes, so that requests get past authentication.
      auth: fc.constantFrom('right', 'right', 'right', 'right', 'key', 'admin', 'bad', 'none'),
    });

    const failures: string[] = [];
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(requestArbitrary, async (fuzzed) => {
        const path = fuzzed.route.path.replace(/\{(\w+)\}/g, (_match, name: string) => {
          const given = fuzzed.params[name];
          if (typeof given === 'number') return encodePathValue(ids[name]?.[given % ids[name].length] ?? String(given));
          return given === undefined ? (ids[name]?.[0] ?? 'x') : encodePathValue(given);
        });
        const uploadRoute = fuzzed.route.path.startsWith('/upload/');
        const target = uploadRoute && fuzzed.useSignedUpload ? ids.uploads[fuzzed.route.method === 'put' ? 0 : 1] : path;
        let call = request(t.http)[fuzzed.route.method](target);
        if (!(uploadRoute && fuzzed.useSignedUpload)) call = call.query(fuzzed.query);
        const right = fuzzed.route.path.startsWith('/v1/admin') ? 'admin' : SESSION_ROUTE.test(fuzzed.route.path) ? 'session' : 'key';
        const auth = fuzzed.auth === 'right' ? right : fuzzed.auth;
        if (auth === 'key') call = call.set(bearer(org.key));
        if (auth === 'session') call = call.set({ Cookie: member.cookie, 'X-Organization-Id': org.id, 'X-CSRF-Token': member.csrfToken });
        if (auth === 'admin') call = call.set(bearer(TEST_ADMIN_TOKEN));
        if (fuzzed.auth === 'bad') call = call.set(bearer('fsk_' + 'b'.repeat(43)));
        for (const [name, value] of Object.entries(fuzzed.headers)) if (value !== undefined && sendable(value)) call = call.set(name, value);
        if (fuzzed.body.kind === 'json') call = call.set('Content-Type', 'application/json').send(JSON.stringify(fuzzed.body.value) ?? 'null');
        if (fuzzed.body.kind === 'raw') {
          if (fuzzed.body.contentType) call = call.set('Content-Type', fuzzed.body.contentType);
          call = call.send(fuzzed.body.value);
        }
        // A change stream that opens never ends: its status and headers are the answer; then it is let go.
        if (fuzzed.route.path.endsWith('/stream')) {
          call = call.buffer(true).parse((response, done) => {
            const stream = response as unknown as IncomingMessage;
            if (stream.headers['content-type']?.startsWith('text/event-stream')) {
              stream.on('error', () => undefined);
              stream.destroy();
              return done(null, null);
            }
            let text = '';
            stream.setEncoding('utf8');
            stream.on('data', (chunk: string) => (text += chunk));
            stream.on('end', () => done(null, text));
          });
        }
        const response = await call;
        statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
        if (response.status >= 500) {
          failures.push(`${fuzzed.route.method.toUpperCase()} ${target} → ${response.status} ${response.text?.slice(0, 200)}`);
        }
        return response.status < 500;
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
    expect(failures).toEqual([]);
    // The run reached past validation into the services, not only into 400s and 401s.
    console.info(`fuzz statuses: ${JSON.stringify(Object.fromEntries([...statuses].sort(([a], [b]) => a - b)))}`);
    for (const status of [200, 201, 400, 401, 404]) expect(statuses.get(status) ?? 0).toBeGreaterThan(0);
    await request(t.http).get('/health').expect(200, { status: 'ok', database: 'up' });
  });
});
