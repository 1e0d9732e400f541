import request from 'supertest';
import { previewOpenApiDocument } from '../../src/app/openapi-preview';
import { Contract, OpenApiDocument } from '../support/contract';
import { createTestApp, TestApp } from '../support/test-app';

type MediaType = { schema: unknown; example?: unknown; examples?: Record<string, { summary?: string; value?: unknown }> };
type Operation = {
  summary?: string;
  description?: string;
  security?: Record<string, string[]>[];
  requestBody?: { content?: Record<string, MediaType> };
  responses: Record<string, { content?: Record<string, MediaType> }>;
};
type SecurityScheme = { type: string; scheme?: string; bearerFormat?: string; description?: string };

// Every operation can fail unexpectedly (500) or lose its database (503); one with a body can also be refused
// by the body parser before routing: malformed (400), too large (413), not JSON (415), or be cut off because
// it did not arrive within HTTP_REQUEST_TIMEOUT_SECONDS (408).
const ANY = ['500', '503'];
const BODY = ['400', '408', '413', '415', ...ANY];

// Every flag and admin endpoint, with every status it can answer: the document must list each one. Every
// API-key route can answer 429 (its key's budget, or its address's failed authentications), and every one but
// the config poll 400 (a query parameter it does not take).
const FLAG_OPERATIONS: [string, string, string[]][] = [
  ['post', '/v1/flags', ['201', '401', '403', '409', '429', ...BODY]],
  ['get', '/v1/flags', ['200', '400', '401', '403', '429', ...ANY]],
  ['get', '/v1/flags/{flagId}', ['200', '400', '401', '403', '404', '429', ...ANY]],
  ['patch', '/v1/flags/{flagId}', ['200', '401', '403', '404', '409', '412', '429', ...BODY]],
  ['delete', '/v1/flags/{flagId}', ['204', '401', '403', '404', '412', '429', ...BODY]],
  ['get', '/v1/flags/config', ['200', '304', '401', '403', '429', ...ANY]],
  ['get', '/v1/flags/quota', ['200', '400', '401', '403', '429', ...ANY]],
  ['get', '/v1/flags/audit', ['200', '400', '401', '403', '429', ...ANY]],
];

// Every admin route can answer 429: wrong admin tokens spend their address's budget of failed authentications.
const ADMIN_OPERATIONS: [string, string, string[]][] = [
  ['post', '/v1/admin/organizations', ['201', '401', '429', ...BODY]],
  ['get', '/v1/admin/organizations', ['200', '400', '401', '429', ...ANY]],
  ['get', '/v1/admin/organizations/{orgId}', ['200', '400', '401', '404', '429', ...ANY]],
  ['patch', '/v1/admin/organizations/{orgId}', ['200', '401', '404', '429', ...BODY]],
  ['post', '/v1/admin/organizations/{orgId}/api-keys', ['201', '401', '404', '429', ...BODY]],
  ['delete', '/v1/admin/organizations/{orgId}/api-keys/{keyId}', ['204', '401', '404', '429', ...BODY]],
  ['post', '/v1/admin/organizations/{orgId}/subscriptions', ['201', '401', '404', '429', ...BODY]],
  ['delete', '/v1/admin/organizations/{orgId}/subscriptions/{subscriptionId}', ['204', '401', '404', '429', ...BODY]],
];

// The admin API's people: users and memberships.
const ADMIN_PEOPLE_OPERATIONS: [string, string, string[]][] = [
  ['post', '/v1/admin/users', ['201', '401', '409', '429', ...BODY]],
  ['get', '/v1/admin/users', ['200', '400', '401', '429', ...ANY]],
  ['delete', '/v1/admin/users/{userId}', ['204', '401', '404', '409', '429', ...BODY]],
  ['post', '/v1/admin/organizations/{orgId}/members', ['201', '401', '404', '409', '429', ...BODY]],
  ['patch', '/v1/admin/organizations/{orgId}/members/{userId}', ['200', '401', '404', '409', '429', ...BODY]],
  ['delete', '/v1/admin/organizations/{orgId}/members/{userId}', ['204', '401', '404', '409', '429', ...BODY]],
];

// An organization's people and keys: a signed-in member only (403 for API keys, roles and a missing CSRF token).
const ORGANIZATION_PEOPLE_OPERATIONS: [string, string, string[]][] = [
  ['get', '/v1/organization/members', ['200', '400', '401', '403', '429', ...ANY]],
  ['patch', '/v1/organization/members/{userId}', ['200', '401', '403', '404', '409', '429', ...BODY]],
  ['delete', '/v1/organization/members/{userId}', ['204', '401', '403', '404', '409', '429', ...BODY]],
  ['post', '/v1/organization/invitations', ['201', '401', '403', '409', '429', ...BODY]],
  ['get', '/v1/organization/invitations', ['200', '400', '401', '403', '429', ...ANY]],
  ['delete', '/v1/organization/invitations/{invitationId}', ['204', '401', '403', '404', '429', ...BODY]],
  ['get', '/v1/organization/api-keys', ['200', '400', '401', '403', '429', ...ANY]],
  ['post', '/v1/organization/api-keys', ['201', '401', '403', '429', ...BODY]],
  ['delete', '/v1/organization/api-keys/{keyId}', ['204', '401', '403', '404', '429', ...BODY]],
  // Organizations made by their people: renamed and deleted by their admins.
  ['patch', '/v1/organization', ['200', '401', '403', '429', ...BODY]],
  ['delete', '/v1/organization', ['204', '401', '403', '409', '429', ...BODY]],
  ['get', '/v1/organization/review', ['200', '400', '401', '403', '429', ...ANY]],
  ['put', '/v1/organization/review', ['200', '401', '403', '429', ...BODY]],
  ['get', '/v1/organization/review/history', ['200', '400', '401', '403', '429', ...ANY]],
];

// The signed-in user's own routes: the session alone (no organization); sign-in and joining take no credential.
const SESSION_OPERATIONS: [string, string, string[]][] = [
  ['get', '/v1/auth/session', ['200', '400', '401', '429', ...ANY]],
  ['post', '/v1/auth/logout', ['204', '401', '403', '429', ...BODY]],
  ['post', '/v1/auth/password', ['204', '401', '403', '429', ...BODY]],
  ['patch', '/v1/auth/me', ['200', '401', '403', '429', ...BODY]],
  ['post', '/v1/organizations', ['201', '401', '403', '429', ...BODY]],
];
const UNAUTHENTICATED_OPERATIONS: [string, string, string[]][] = [
  ['post', '/v1/auth/login', ['200', '401', '429', ...BODY]],
  ['get', '/v1/auth/invitations/{token}', ['200', '400', '404', '429', ...ANY]],
  ['post', '/v1/auth/invitations/{token}/accept', ['200', '204', '401', '403', '404', '409', '410', '429', ...BODY]],
];

describe('OpenAPI document', () => {
  let t: TestApp;
  let paths: Record<string, Record<string, Operation>>;
  let schemas: Record<string, { properties?: Record<string, unknown>; required?: string[] }>;
  let securitySchemes: Record<string, SecurityScheme>;
  let contract: Contract;

  beforeAll(async () => {
    t = await createTestApp();
    const doc = await request(t.http).get('/docs-json').expect(200);
    paths = doc.body.paths;
    schemas = doc.body.components.schemas;
    securitySchemes = doc.body.components.securitySchemes;
    contract = new Contract(doc.body as OpenApiDocument);
  });
  afterAll(() => t.close());

  it('serves Swagger UI at /docs', async () => {
    const ui = await request(t.http).get('/docs').redirects(1).expect(200);
    expect(ui.text).toMatch(/swagger-ui/i);
  });

  const secured = (list: [string, string, string[]][], security: string[]) =>
    list.map(([method, path, statuses]): [string, string, string[], string[]] => [method.toUpperCase(), path, statuses, security]);
  const operations: [string, string, string[], string[]][] = [
    // A route of an organization takes an API key or a signed-in member's session.
    ...secured(FLAG_OPERATIONS, ['apiKey', 'session']),
    ...secured(ADMIN_OPERATIONS, ['adminToken']),
    ...secured(ADMIN_PEOPLE_OPERATIONS, ['adminToken']),
    ...secured(ORGANIZATION_PEOPLE_OPERATIONS, ['session']),
    ...secured(SESSION_OPERATIONS, ['session']),
  ];

  it.each(operations)('documents %s %s with its statuses, error bodies and security', (method, path, statuses, security) => {
    const operation = paths[path]?.[method.toLowerCase()];
    expect(operation).toBeDefined();
    expect(operation.security).toEqual(security.map((scheme) => ({ [scheme]: [] })));
    expect(Object.keys(operation.responses).sort()).toEqual([...statuses].sort());
    for (const status of statuses.filter((code) => Number(code) >= 400)) {
      expect(operation.responses[status].content?.['application/json'].schema).toEqual({ $ref: '#/components/schemas/ApiErrorDto' });
    }
  });

  it.each(secured(UNAUTHENTICATED_OPERATIONS, []))(
    'documents %s %s with its statuses and error bodies, and no credential',
    (method, path, statuses) => {
      const operation = paths[path]?.[method.toLowerCase()];
      expect(operation).toBeDefined();
      expect(operation.security).toBeUndefined();
      expect(Object.keys(operation.responses).sort()).toEqual([...statuses].sort());
      for (const status of statuses.filter((code) => Number(code) >= 400)) {
        expect(operation.responses[status].content?.['application/json'].schema).toEqual({ $ref: '#/components/schemas/ApiErrorDto' });
      }
    },
  );

  it('declares the session cookie as a security scheme beside bearer keys, naming the headers that go with it', () => {
    expect(securitySchemes.session).toEqual({
      type: 'apiKey',
      in: 'cookie',
      name: 'flagstore_session',
      description: expect.stringMatching(/X-Organization-Id.*X-CSRF-Token/s),
    });
    expect(paths['/v1/auth/login'].post.responses['200']).toMatchObject({ headers: { 'Set-Cookie': expect.anything() } });
  });

  it('describes each status once (two decorators for one status would be joined into one muddled text)', () => {
    const joined = Object.entries(paths).flatMap(([path, item]) =>
      Object.entries(item).flatMap(([method, operation]) =>
        Object.entries(operation.responses)
          .filter(([, response]) => /\n\n/.test((response as { description?: string }).description ?? ''))
          .map(([status]) => `${method} ${path} ${status}`),
      ),
    );
    expect(joined).toEqual([]);
  });

  it('describes the flag, quota, config and audit bodies field by field', () => {
    expect(Object.keys(schemas.FeatureFlagDto.properties!).sort()).toEqual(
      ['archived', 'createdAt', 'description', 'id', 'key', 'locked', 'name', 'rules', 'runtime', 'type', 'updatedAt', 'value'].sort(),
    );
    expect(Object.keys(schemas.FeatureFlagQuotaDto.properties!).sort()).toEqual(['locked', 'max', 'subscribed', 'used']);
    expect(Object.keys(schemas.ConfigPayloadDto.properties!).sort()).toEqual(['etag', 'flags', 'generatedAt', 'pollIntervalSeconds']);
    expect(Object.keys(schemas.FlagConfigEntryDto.properties!).sort()).toEqual(['key', 'rules', 'runtime', 'type', 'value']);
    // Targeting adds `rules` only where a flag has rules: the spec's fields stay the required ones.
    for (const schema of ['FeatureFlagDto', 'FlagConfigEntryDto', 'FlagSnapshotDto', 'CreateFlagDto', 'UpdateFlagDto', 'ExportedFlagDto']) {
      expect([schema, schemas[schema].required ?? []]).not.toEqual([schema, expect.arrayContaining(['rules'])]);
      expect([schema, (schemas[schema].properties as Record<string, object>).rules]).toEqual([
        schema,
        expect.objectContaining({ type: 'array', maxItems: 20, items: { $ref: '#/components/schemas/FlagRuleDto' } }),
      ]);
    }
    expect(Object.keys(schemas.FeatureFlagAuditEntryDto.properties!).sort()).toEqual(
      ['action', 'actorId', 'actorType', 'after', 'before', 'context', 'createdAt', 'flagId', 'flagKey', 'id'].sort(),
    );
    expect(Object.keys(schemas.ApiErrorDto.properties!).sort()).toEqual(['error', 'message', 'statusCode']);
  });

  it("explains a flag's runtime where it is chosen and shown: who receives shared and server flags, and which to pick for a secret", () => {
    for (const schema of ['CreateFlagDto', 'UpdateFlagDto', 'FeatureFlagDto']) {
      const runtime = (schemas[schema].properties as Record<string, { description?: string }>).runtime;
      expect([schema, runtime.description]).toEqual([
        schema,
        expect.stringMatching(/`shared`: game servers receive it and may relay it to players' game clients.*`server`:.*must never forward it/),
      ]);
      expect(runtime.description).toMatch(/secret/);
    }
  });

  it("says whether a purge was a dry run, in its answer, beside the spec's purgedCount", () => {
    expect(Object.keys(schemas.PurgeResultDto.properties!).sort()).toEqual(['dryRun', 'message', 'purgedCount']);
    expect([...(schemas.PurgeResultDto.required ?? [])].sort()).toEqual(['dryRun', 'message', 'purgedCount']);
  });

  it('is made the same with no database (what the console build generates its client from)', async () => {
    const served = await request(t.http).get('/docs-json').expect(200);
    const preview = JSON.parse(JSON.stringify(await previewOpenApiDocument(t.config)));
    expect(preview).toEqual(served.body);
  });

  it("describes targeting's rule and condition schemas exactly: one condition schema per operator family", () => {
    const rule = schemas.FlagRuleDto;
    expect(rule.required!.sort()).toEqual(['conditions', 'id', 'value']);
    const properties = rule.properties as Record<string, Record<string, unknown>>;
    expect(properties.id).toMatchObject({ type: 'string', minLength: 1, maxLength: 64, pattern: '^[a-z0-9][a-z0-9_-]*$' });
    expect(properties.conditions).toMatchObject({
      type: 'array',
      minItems: 1,
      maxItems: 10,
      items: {
        oneOf: ['ListConditionDto', 'NumberConditionDto', 'VersionConditionDto', 'PercentageConditionDto'].map((name) => ({
          $ref: `#/components/schemas/${name}`,
        })),
      },
    });
    const condition = (name: string) => schemas[name].properties as Record<string, Record<string, unknown>>;
    for (const name of ['ListConditionDto', 'NumberConditionDto', 'VersionConditionDto', 'PercentageConditionDto']) {
      expect(schemas[name].required!.sort()).toEqual(['attribute', 'operator', 'values']);
      expect(condition(name).attribute).toMatchObject({ type: 'string', pattern: '^[A-Za-z0-9_.-]{1,64}$' });
    }
    expect(condition('ListConditionDto').operator.enum).toEqual(['in', 'notIn']);
    expect(condition('ListConditionDto').values).toMatchObject({ type: 'array', items: { type: 'string' }, minItems: 1, maxItems: 100 });
    expect(condition('NumberConditionDto').operator.enum).toEqual(['gte', 'lt']);
    expect(condition('NumberConditionDto').values).toMatchObject({ type: 'array', items: { type: 'number' }, minItems: 1, maxItems: 1 });
    expect(condition('VersionConditionDto').operator.enum).toEqual(['semverGte', 'semverLt']);
    expect(condition('VersionConditionDto').values).toMatchObject({ type: 'array', items: { type: 'string' }, minItems: 1, maxItems: 1 });
    expect(condition('PercentageConditionDto').operator.enum).toEqual(['percentage']);
    expect(condition('PercentageConditionDto').values).toMatchObject({
      type: 'array',
      items: { type: 'number', minimum: 0, maximum: 100 },
      minItems: 2,
      maxItems: 2,
    });
    for (const name of ['OfrepEvaluationDto', 'FlagEvaluationDto']) {
      expect((schemas[name].properties as Record<string, { enum?: string[] }>).reason.enum).toEqual([
        'STATIC',
        'TARGETING_MATCH',
        'SPLIT',
        'DEFAULT',
      ]);
    }
    const evaluate = paths['/v1/flags/{flagId}/evaluate'].post as unknown as { responses: Record<string, unknown> };
    expect(Object.keys(evaluate.responses).sort()).toEqual(expect.arrayContaining(['200', '400', '401', '403', '404', '429']));
  });

  it('documents a flag value as any JSON value, and the fields that can be null as nullable', () => {
    type Schema = { type?: string; nullable?: boolean; oneOf?: Schema[]; $ref?: string; enum?: unknown[]; allOf?: Schema[] };
    const property = (schema: string, name: string) => (schemas[schema].properties as Record<string, Schema>)[name];
    for (const [schema, name] of [
      ['FeatureFlagDto', 'value'],
      ['FlagConfigEntryDto', 'value'],
      ['FlagSnapshotDto', 'value'],
      ['CreateFlagDto', 'value'],
      ['UpdateFlagDto', 'value'],
    ]) {
      const value = property(schema, name);
      // A `type` beside the oneOf would make generated clients refuse every value that is not of that type.
      expect(value.type).toBeUndefined();
      expect(value.oneOf!.map((branch) => branch.type).sort()).toEqual(['array', 'boolean', 'number', 'object', 'string']);
      expect(value.oneOf!.find((branch) => branch.type === 'object')!.nullable).toBe(true);
    }
    for (const name of ['flagId', 'flagKey', 'actorId']) {
      const field = property('FeatureFlagAuditEntryDto', name);
      expect(field).toMatchObject({ type: 'string', nullable: true });
    }
    // OpenAPI 3.0.3: `nullable` widens only a `type` beside it, never a $ref or allOf: null is a branch of its own.
    for (const name of ['before', 'after']) {
      const field = property('FeatureFlagAuditEntryDto', name);
      expect(field.allOf).toBeUndefined();
      expect(field.nullable).toBeUndefined();
      expect(field.oneOf).toEqual([{ $ref: '#/components/schemas/FlagSnapshotDto' }, { type: 'object', nullable: true, enum: [null] }]);
    }
    expect(property('FeatureFlagDto', 'description').nullable).toBe(true);
  });

  describe('as the teams who read it first need it', () => {
    const everyOperation = () =>
      Object.entries(paths).flatMap(([path, item]) => Object.entries(item).map(([method, operation]) => ({ path, method, operation })));
    const isJson = (mediaType: string) => mediaType === 'application/json' || mediaType.endsWith('+json');

    /** Each example of a media type: `example`, or every value of `examples`. */
    function examplesOf(media: MediaType): { name: string; value: unknown }[] {
      if (media.example !== undefined) return [{ name: 'example', value: media.example }];
      return Object.entries(media.examples ?? {}).map(([name, example]) => ({ name, value: example.value }));
    }

    /** What is wrong with the examples of one body: none at all, or one that its own schema refuses. */
    function exampleFaults(label: string, media: MediaType, pointer: string[]): string[] {
      const examples = examplesOf(media);
      if (examples.length === 0) return [`${label}: no example`];
      return examples.flatMap(({ name, value }) => {
        if (value === undefined) return [`${label}: example ${name} has no value`];
        const mismatches = contract.mismatches([...pointer, 'schema'], value);
        return mismatches.length > 0 ? [`${label}: example ${name} does not match its schema: ${mismatches.join('; ')}`] : [];
      });
    }

    it('gives every operation a summary and a description that says more than the summary', () => {
      const lacking = everyOperation()
        .filter(({ operation }) => {
          const summary = operation.summary?.trim() ?? '';
          const description = operation.description?.trim() ?? '';
          return summary === '' || description === '' || description === summary;
        })
        .map(({ path, method }) => `${method.toUpperCase()} ${path}`);
      expect(lacking).toEqual([]);
    });

    it('gives every JSON request body an example, and every example matches the body schema', () => {
      const faults = everyOperation().flatMap(({ path, method, operation }) =>
        Object.entries(operation.requestBody?.content ?? {})
          .filter(([mediaType]) => isJson(mediaType))
          .flatMap(([mediaType, media]) =>
            exampleFaults(`${method.toUpperCase()} ${path} request`, media, ['paths', path, method, 'requestBody', 'content', mediaType]),
          ),
      );
      expect(faults).toEqual([]);
      // Not vacuous: the document has JSON request bodies, and the check holds them to their schemas.
      const bodies = everyOperation().filter(({ operation }) => operation.requestBody?.content?.['application/json']);
      expect(bodies.length).toBeGreaterThanOrEqual(11);
      const createFlag = ['paths', '/v1/flags', 'post', 'requestBody', 'content', 'application/json', 'schema'];
      expect(contract.mismatches(createFlag, { key: 'Not A Key', name: 'x', type: 'boolean', value: true })).not.toEqual([]);
    });

    it('gives every JSON success answer an example, and every example matches the answer schema', () => {
      const faults = everyOperation().flatMap(({ path, method, operation }) =>
        Object.entries(operation.responses)
          .filter(([status]) => status.startsWith('2'))
          .flatMap(([status, response]) =>
            Object.entries(response.content ?? {})
              .filter(([mediaType]) => isJson(mediaType))
              .flatMap(([mediaType, media]) =>
                exampleFaults(`${method.toUpperCase()} ${path} ${status}`, media, ['paths', path, method, 'responses', status, 'content', mediaType]),
              ),
          ),
      );
      expect(faults).toEqual([]);
    });

    it('shows an issued key in its real format, and no key material in the read-back', () => {
      const issued = paths['/v1/admin/organizations/{orgId}/api-keys'].post.responses['201'].content!['application/json'];
      expect(examplesOf(issued).map(({ value }) => (value as { key: string }).key)).toEqual([expect.stringMatching(/^fsk_[A-Za-z0-9_-]{43}$/)]);
      const detail = paths['/v1/admin/organizations/{orgId}'].get.responses['200'].content!['application/json'];
      for (const { value } of examplesOf(detail)) expect(JSON.stringify(value)).not.toMatch(/fsk_|keyHash|"key"/);
      expect(Object.keys(schemas.ApiKeyDto.properties!).sort()).toEqual(['createdAt', 'id', 'name', 'permissions', 'revokedAt']);
    });

    it('names the bearer formats truthfully: opaque fsk_ API keys, an opaque admin token and metrics token, never JWT', () => {
      const bearers = Object.entries(securitySchemes).filter(([, scheme]) => scheme.type === 'http' && scheme.scheme === 'bearer');
      expect(bearers.map(([name]) => name).sort()).toEqual(['adminToken', 'apiKey', 'metricsToken']);
      for (const [name, scheme] of bearers) {
        expect({ name, bearerFormat: scheme.bearerFormat }).toEqual({ name, bearerFormat: expect.stringMatching(/\S/) });
        expect({ name, bearerFormat: scheme.bearerFormat }).not.toEqual({ name, bearerFormat: expect.stringMatching(/jwt/i) });
      }
      expect(securitySchemes.apiKey.bearerFormat).toMatch(/fsk_/);
      expect(securitySchemes.apiKey.bearerFormat).toMatch(/opaque/i);
      expect(securitySchemes.adminToken.bearerFormat).toMatch(/opaque/i);
      expect(securitySchemes.apiKeyHeader.description).toMatch(/fsk_/);
    });
  });
});
