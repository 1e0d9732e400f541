import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import request from 'supertest';
import { Permission } from '../../src/auth/permission';
import { canonicalJson } from '../../src/common/canonical-json';
import { api, createFlag, storedFlagVersion } from '../factories/flags.factory';
import { admin, bearer, createApiKey, createOrganization, subscribe } from '../factories/organizations.factory';
import { asSession, memberSignedIn } from '../factories/people.factory';
import { expectApiError } from '../support/expect-error';
import { useTestApp } from '../support/test-suite';

interface Vectors {
  flags: { key: string; type: string; value: unknown; rules?: unknown[] }[];
  evaluations: { flag: string; context: Record<string, unknown>; expected: { value: unknown; reason: string; variant: string } }[];
}
const vectors = JSON.parse(readFileSync(resolve(__dirname, '../fixtures/targeting-vectors.json'), 'utf8')) as Vectors;

const OFREP = '/ofrep/v1/evaluate/flags';
const EU = { id: 'eu', conditions: [{ attribute: 'region', operator: 'in', values: ['eu-west'] }], value: true };
const CANARY = { id: 'canary', conditions: [{ attribute: 'serverId', operator: 'percentage', values: [0, 10] }], value: true };

/** Targeting (decisions.md, "Targeting"; README, "Targeting"): rules through the HTTP API, OFREP and the evaluate route. */
describe('targeting', () => {
  const { t, org } = useTestApp({ subscribed: true });

  const patch = (flagId: string, body: object) => api(t, org.key).patch(`/flags/${flagId}`).send(body);
  type Snapshot = { value: unknown; rules?: { id: string }[] };
  const audit = async (flagId: string) =>
    (await api(t, org.key).get(`/flags/audit?flagId=${flagId}`).expect(200)).body.results as {
      id: string;
      action: string;
      before: Snapshot;
      after: Snapshot;
    }[];
  const ofrep = (path = '', body: object = { context: {} }) => request(t.http).post(`${OFREP}${path}`).set(bearer(org.key)).send(body);

  describe('rules on a flag', () => {
    it('stores them with the flag, in order and in the documented field order, and serves them in the config payload', async () => {
      const created = await api(t, org.key)
        .post('/flags')
        .send({
          key: 'new-matchmaker',
          name: 'New matchmaker',
          type: 'boolean',
          value: false,
          // Fields in another order than documented: answers give {id, conditions, value} and {attribute, operator, values}.
          rules: [{ value: true, conditions: [{ values: ['eu-west'], operator: 'in', attribute: 'region' }], id: 'eu' }, CANARY],
        })
        .expect(201);
      expect(Object.keys(created.body.rules[0])).toEqual(['id', 'conditions', 'value']);
      expect(Object.keys(created.body.rules[0].conditions[0])).toEqual(['attribute', 'operator', 'values']);
      expect(created.body.rules).toEqual([EU, CANARY]);
      expect((await api(t, org.key).get(`/flags/${created.body.id}`).expect(200)).body.rules).toEqual([EU, CANARY]);

      const config = await api(t, org.key).get('/flags/config').expect(200);
      expect(config.body.flags).toEqual([{ key: 'new-matchmaker', type: 'boolean', value: false, runtime: 'shared', rules: [EU, CANARY] }]);
      const [entry] = await audit(created.body.id);
      expect(entry).toMatchObject({ action: 'flag.create', after: { value: false, rules: [EU, CANARY] } });
    });

    it('leaves the rules field out everywhere for a flag without rules, as the specification lists the fields', async () => {
      const flag = await createFlag(t, org.key, { key: 'plain', type: 'number', value: 1 });
      expect(flag).not.toHaveProperty('rules');
      const withEmpty = await api(t, org.key).post('/flags').send({ key: 'empty', name: 'Empty', type: 'number', value: 1, rules: [] }).expect(201);
      expect(withEmpty.body).not.toHaveProperty('rules');
      const config = await api(t, org.key).get('/flags/config').expect(200);
      for (const entry of config.body.flags) expect(Object.keys(entry)).toEqual(['key', 'type', 'value', 'runtime']);
      const [entry] = await audit(flag.id);
      expect(Object.keys(entry.after).sort()).toEqual(['archived', 'description', 'name', 'runtime', 'type', 'value']);
      const { rows } = await t.db.query('SELECT rules FROM flags WHERE organization_id = $1', [org.id]);
      expect(rows).toEqual([{ rules: null }, { rules: null }]);
    });

    it('replaces the whole list on PATCH, labelled flag.value.set; [] removes them; the same rules again write nothing', async () => {
      const flag = await createFlag(t, org.key, { key: 'f', type: 'boolean', value: false });
      expect((await patch(flag.id, { rules: [EU, CANARY] }).expect(200)).body.rules).toEqual([EU, CANARY]);
      expect((await patch(flag.id, { rules: [CANARY] }).expect(200)).body.rules).toEqual([CANARY]);
      const entries = await audit(flag.id);
      expect(entries.map((entry) => entry.action)).toEqual(['flag.value.set', 'flag.value.set', 'flag.create']);
      expect(entries[0]).toMatchObject({ before: { rules: [EU, CANARY] }, after: { rules: [CANARY] } });

      // The same list with its fields in another order is no change.
      const stored = await storedFlagVersion(t, flag.id);
      const reordered = { value: true, conditions: [{ values: [0, 10], attribute: 'serverId', operator: 'percentage' }], id: 'canary' };
      expect((await patch(flag.id, { rules: [reordered] }).expect(200)).body.rules).toEqual([CANARY]);
      expect(await storedFlagVersion(t, flag.id)).toEqual(stored);

      const cleared = await patch(flag.id, { rules: [] }).expect(200);
      expect(cleared.body).not.toHaveProperty('rules');
      const [removal] = await audit(flag.id);
      expect(removal.action).toBe('flag.value.set');
      expect(removal.after).not.toHaveProperty('rules');
      expect(await storedFlagVersion(t, flag.id)).toMatchObject({ auditEntries: 4 });
    });

    it('labels a change of runtime and rules together by the runtime, and of rules and name by the rules', async () => {
      const flag = await createFlag(t, org.key, { key: 'f', type: 'boolean', value: false });
      await patch(flag.id, { rules: [EU], runtime: 'server' }).expect(200);
      await patch(flag.id, { rules: [CANARY], name: 'Renamed' }).expect(200);
      expect((await audit(flag.id)).map((entry) => entry.action)).toEqual(['flag.value.set', 'flag.runtime.set', 'flag.create']);
    });

    it('changes the config ETag on a rules-only edit, and serves the new rules', async () => {
      const flag = await createFlag(t, org.key, { key: 'f', type: 'boolean', value: false });
      const before = await api(t, org.key).get('/flags/config').expect(200);
      await patch(flag.id, { rules: [EU] }).expect(200);
      const after = await api(t, org.key).get('/flags/config').set('If-None-Match', before.headers.etag).expect(200);
      expect(after.headers.etag).not.toBe(before.headers.etag);
      expect(after.body.flags[0].rules).toEqual([EU]);
      await patch(flag.id, { rules: [CANARY] }).expect(200);
      const again = await api(t, org.key).get('/flags/config').set('If-None-Match', after.headers.etag).expect(200);
      expect(again.body.flags[0].rules).toEqual([CANARY]);
      await api(t, org.key).get('/flags/config').set('If-None-Match', again.headers.etag).expect(304);
    });

    it('changes type together with rules of the new type, and refuses a type change that leaves the old rules', async () => {
      const flag = await api(t, org.key)
        .post('/flags')
        .send({ key: 'f', name: 'F', type: 'boolean', value: false, rules: [EU] })
        .expect(201);
      const before = await storedFlagVersion(t, flag.body.id);
      expectApiError(
        await patch(flag.body.id, { type: 'string', value: 'off' }),
        400,
        'VALIDATION_ERROR',
        /^rules must be sent when type changes: .*type string/,
      );
      expectApiError(
        await patch(flag.body.id, { type: 'string', value: 'off', rules: [EU] }),
        400,
        'VALIDATION_ERROR',
        /^rules\[0\]\.value must be a string when type is string$/,
      );
      // Rules sent alone are checked against the stored type.
      expectApiError(await patch(flag.body.id, { rules: [{ ...EU, value: 'on' }] }), 400, 'VALIDATION_ERROR', /^rules\[0\]\.value must be a boolean/);
      expect(await storedFlagVersion(t, flag.body.id)).toEqual(before);

      const changed = await patch(flag.body.id, { type: 'string', value: 'off', rules: [{ ...EU, value: 'on' }] }).expect(200);
      expect(changed.body).toMatchObject({ type: 'string', value: 'off', rules: [{ ...EU, value: 'on' }] });
      const cleared = await patch(flag.body.id, { type: 'number', value: 1, rules: [] }).expect(200);
      expect(cleared.body).not.toHaveProperty('rules');
    });
  });

  describe('validation: every rule of decisions.md is a 400 naming the field, and nothing is written', () => {
    const condition = (operator: string, values: unknown[], attribute = 'a') => ({ attribute, operator, values });
    const rule = (conditions: unknown[], value: unknown = true, id = 'r') => ({ id, conditions, value });
    const many = (count: number, make: (index: number) => unknown) => Array.from({ length: count }, (_, index) => make(index));

    it.each<[string, unknown, RegExp]>([
      ['not an array', { id: 'r' }, /^rules must be an array$/],
      ['null', null, /^rules must be an array$/],
      ['21 rules', many(21, (i) => rule([condition('in', ['x'])], true, `r${i}`)), /^rules must hold at most 20 rules \(got 21\)$/],
      ['a rule that is not an object', ['r'], /^rules\[0\] must be an object/],
      ['two rules with one id', [rule([condition('in', ['x'])]), rule([condition('in', ['y'])])], /^rules\[1\]\.id "r" is used by an earlier rule/],
      ['an id with capitals', [rule([condition('in', ['x'])], true, 'Canary')], /^rules\[0\]\.id must be 1-64 characters matching/],
      ['an id of 65 characters', [rule([condition('in', ['x'])], true, 'r'.repeat(65))], /^rules\[0\]\.id must be 1-64/],
      ['a missing id', [{ conditions: [condition('in', ['x'])], value: true }], /^rules\[0\]\.id must be/],
      ['an unknown rule field', [{ ...rule([condition('in', ['x'])]), weight: 1 }], /^property rules\[0\]\.weight should not exist$/],
      ['no conditions', [rule([])], /^rules\[0\]\.conditions must be an array of 1 to 10 conditions$/],
      ['11 conditions', [rule(many(11, () => condition('in', ['x'])))], /^rules\[0\]\.conditions must be an array of 1 to 10/],
      ['a missing value', [{ id: 'r', conditions: [condition('in', ['x'])] }], /^rules\[0\]\.value is required$/],
      ['a value of another type', [rule([condition('in', ['x'])], 'yes')], /^rules\[0\]\.value must be a boolean/],
      ['an attribute with a space', [rule([condition('in', ['x'], 'player id')])], /^rules\[0\]\.conditions\[0\]\.attribute must be 1-64 characters/],
      ['an attribute of 65 characters', [rule([condition('in', ['x'], 'a'.repeat(65))])], /^rules\[0\]\.conditions\[0\]\.attribute must be 1-64/],
      ['an empty attribute', [rule([condition('in', ['x'], '')])], /^rules\[0\]\.conditions\[0\]\.attribute must be 1-64/],
      [
        'an unknown operator',
        [rule([condition('regex', ['.*'])])],
        /^rules\[0\]\.conditions\[0\]\.operator must be one of in, notIn, gte, lt, semverGte, semverLt, percentage$/,
      ],
      [
        'an unknown condition field',
        [rule([{ ...condition('in', ['x']), negate: true }])],
        /^property rules\[0\]\.conditions\[0\]\.negate should not exist$/,
      ],
      ['values that is not an array', [rule([condition('in', 'x' as never)])], /^rules\[0\]\.conditions\[0\]\.values must be an array$/],
      ['in without values', [rule([condition('in', [])])], /^rules\[0\]\.conditions\[0\]\.values must hold 1 to 100 strings for in$/],
      ['notIn with a number', [rule([condition('notIn', ['x', 1])])], /values must hold 1 to 100 strings for notIn$/],
      ['in with 101 values', [rule([condition('in', many(101, String))])], /values must hold 1 to 100 strings for in$/],
      ['gte with a string', [rule([condition('gte', ['10'])])], /^rules\[0\]\.conditions\[0\]\.values must hold exactly one number for gte$/],
      ['lt with two numbers', [rule([condition('lt', [1, 2])])], /values must hold exactly one number for lt$/],
      ['semverGte with v1.4', [rule([condition('semverGte', ['v1.4'])])], /values must hold exactly one semantic version .* for semverGte$/],
      ['semverLt with a number', [rule([condition('semverLt', [1.4])])], /values must hold exactly one semantic version .* for semverLt$/],
      [
        'percentage with from = to',
        [rule([condition('percentage', [10, 10])])],
        /values must be \[from, to\] with 0 <= from < to <= 100 for percentage$/,
      ],
      ['percentage below 0', [rule([condition('percentage', [-1, 10])])], /values must be \[from, to\]/],
      ['percentage above 100', [rule([condition('percentage', [90, 101])])], /values must be \[from, to\]/],
      ['percentage with one bound', [rule([condition('percentage', [10])])], /values must be \[from, to\]/],
      ['percentage with strings', [rule([condition('percentage', ['0', '10'])])], /values must be \[from, to\]/],
      [
        'a second rule broken',
        [rule([condition('in', ['x'])]), rule([condition('gte', [])], true, 'b')],
        /^rules\[1\]\.conditions\[0\]\.values must hold exactly one number/,
      ],
      [
        'the third condition broken',
        [rule([condition('in', ['x']), condition('in', ['y']), condition('lt', ['z'])])],
        /^rules\[0\]\.conditions\[2\]\.values/,
      ],
    ])('%s', async (_case, rules, message) => {
      const flag = await createFlag(t, org.key, { key: 'f', type: 'boolean', value: false });
      const before = await storedFlagVersion(t, flag.id);
      expectApiError(await patch(flag.id, { rules }), 400, 'VALIDATION_ERROR', message);
      expectApiError(
        await api(t, org.key).post('/flags').send({ key: 'g', name: 'G', type: 'boolean', value: false, rules }),
        400,
        'VALIDATION_ERROR',
        message,
      );
      expect(await storedFlagVersion(t, flag.id)).toEqual(before);
      expect((await api(t, org.key).get('/flags').expect(200)).body.total).toBe(1);
    });

    it('applies the 4 KB and 4-level limits of value to each rule value, and 16 KB to the whole list', async () => {
      const flag = await createFlag(t, org.key, { key: 'f', type: 'json', value: null });
      const on = [condition('in', ['x'])];
      expectApiError(
        await patch(flag.id, { rules: [rule(on, 'x'.repeat(4100))] }),
        400,
        'VALIDATION_ERROR',
        /^rules\[0\]\.value must be at most 4096 bytes/,
      );
      expectApiError(
        await patch(flag.id, { rules: [rule(on, { a: { b: { c: { d: { e: 1 } } } } })] }),
        400,
        'VALIDATION_ERROR',
        /^rules\[0\]\.value must nest at most 4 levels/,
      );
      const big = many(5, (i) => rule(on, 'x'.repeat(4000), `r${i}`));
      expectApiError(await patch(flag.id, { rules: big }), 400, 'VALIDATION_ERROR', /^rules must be at most 16384 bytes when serialized/);
      const fits = many(4, (i) => rule(on, 'x'.repeat(4000), `r${i}`));
      expect((await patch(flag.id, { rules: fits }).expect(200)).body.rules).toHaveLength(4);
    });

    it('keeps a json rule value exactly as sent, __proto__ and constructor keys included', async () => {
      const value = JSON.parse('{"__proto__": {"admin": true}, "constructor": 1, "tier": "rare"}');
      const flag = await createFlag(t, org.key, { key: 'f', type: 'json', value: null });
      const rules = [rule([condition('in', ['x'])], value)];
      const answer = await api(t, org.key)
        .patch(`/flags/${flag.id}`)
        .set('Content-Type', 'application/json')
        .send(JSON.stringify({ rules }))
        .expect(200);
      // Every key kept (jsonb orders keys its own way, as for value).
      expect(canonicalJson(answer.body.rules[0].value)).toBe(canonicalJson(value));
      expect(Object.keys(answer.body.rules[0].value).sort()).toEqual(['__proto__', 'constructor', 'tier']);
    });
  });

  describe('the lock and archive rules', () => {
    it('refuses rule changes on a locked flag (403) and on an archived one (409), and takes them with the unarchiving edit', async () => {
      const studio = await createOrganization(t);
      const subscription = await subscribe(t, studio.id);
      const flags = [];
      for (let index = 0; index < 6; index += 1) flags.push(await createFlag(t, studio.key, { key: `f${index}`, type: 'boolean', value: false }));
      const edit = (flagId: string, body: object) => api(t, studio.key).patch(`/flags/${flagId}`).send(body);
      const archived = flags[0];
      await edit(archived.id, { archived: true }).expect(200);
      expectApiError(await edit(archived.id, { rules: [EU] }), 409, 'ARCHIVED_FLAG_VALUE');
      expect((await edit(archived.id, { rules: [EU], archived: false }).expect(200)).body.rules).toEqual([EU]);

      await admin(t).delete(`/organizations/${studio.id}/subscriptions/${subscription}`).expect(204);
      const locked = flags[5];
      const before = await storedFlagVersion(t, locked.id);
      expectApiError(await edit(locked.id, { rules: [EU] }), 403, 'FLAG_LOCKED');
      expect(await storedFlagVersion(t, locked.id)).toEqual(before);
    });
  });

  describe('OFREP', () => {
    it('gives every shared test vector over HTTP, on the single route', async () => {
      for (const flag of vectors.flags) {
        await api(t, org.key)
          .post('/flags')
          .send({ name: flag.key, ...flag })
          .expect(201);
      }
      for (const vector of vectors.evaluations) {
        const answer = await ofrep(`/${vector.flag}`, { context: vector.context }).expect(200);
        expect({ flag: vector.flag, context: vector.context, answer: answer.body }).toEqual({
          flag: vector.flag,
          context: vector.context,
          answer: { key: vector.flag, ...vector.expected, metadata: { type: expect.any(String), runtime: 'shared' } },
        });
      }
    });

    it('evaluates the bulk answer by context, with an ETag that covers the context once a flag has rules', async () => {
      await createFlag(t, org.key, { key: 'motd', type: 'string', value: 'hi' });
      const plain = await ofrep('', { context: { region: 'eu-west' } }).expect(200);
      const config = await api(t, org.key).get('/flags/config').expect(200);
      expect(plain.headers.etag).toBe(config.headers.etag);
      // While no flag has rules, the context changes nothing: the config ETag, 304 for any context.
      await ofrep('', { context: { region: 'us-east' } })
        .set('If-None-Match', plain.headers.etag)
        .expect(304);

      await api(t, org.key)
        .post('/flags')
        .send({ key: 'f', name: 'F', type: 'boolean', value: false, rules: [EU] })
        .expect(201);
      const eu = await ofrep('', { context: { region: 'eu-west' } }).expect(200);
      const us = await ofrep('', { context: { region: 'us-east' } }).expect(200);
      const configNow = await api(t, org.key).get('/flags/config').expect(200);
      expect(eu.headers.etag).toMatch(/^W\/"[A-Za-z0-9_-]{32}"$/);
      expect(eu.headers.etag).not.toBe(configNow.headers.etag);
      expect(eu.headers.etag).not.toBe(us.headers.etag);
      expect(eu.body.flags).toEqual([
        { key: 'f', value: true, reason: 'TARGETING_MATCH', variant: 'eu', metadata: { type: 'boolean', runtime: 'shared' } },
        { key: 'motd', value: 'hi', reason: 'STATIC', variant: 'default', metadata: { type: 'string', runtime: 'shared' } },
      ]);
      expect(us.body.flags[0]).toEqual({
        key: 'f',
        value: false,
        reason: 'DEFAULT',
        variant: 'default',
        metadata: { type: 'boolean', runtime: 'shared' },
      });

      // The same context (its keys in any order) revalidates; another context never gets a 304 for the old values.
      await ofrep('', { context: { region: 'eu-west' } })
        .set('If-None-Match', eu.headers.etag)
        .expect(304);
      await ofrep('', { context: { region: 'us-east' } })
        .set('If-None-Match', eu.headers.etag)
        .expect(200);
      const two = await ofrep('', { context: { region: 'eu-west', build: '1.4' } }).expect(200);
      await ofrep('', { context: { build: '1.4', region: 'eu-west' } })
        .set('If-None-Match', two.headers.etag)
        .expect(304);
    });

    it('reports SPLIT with the rule id for a percentage rule', async () => {
      await api(t, org.key)
        .post('/flags')
        .send({
          key: 'double-xp',
          name: 'D',
          type: 'boolean',
          value: false,
          rules: [{ ...CANARY, conditions: [{ attribute: 'targetingKey', operator: 'percentage', values: [74.89, 100] }] }],
        })
        .expect(201);
      const answer = await ofrep('/double-xp', { context: { targetingKey: 'player-1' } }).expect(200);
      expect(answer.body).toMatchObject({ value: true, reason: 'SPLIT', variant: 'canary' });
    });
  });

  describe('POST /v1/flags/{flagId}/evaluate', () => {
    it('gives value, reason and variant for a context, to an API key and to a signed-in viewer', async () => {
      const flag = await api(t, org.key)
        .post('/flags')
        .send({ key: 'f', name: 'F', type: 'boolean', value: false, rules: [EU] })
        .expect(201);
      const evaluate = (context: unknown) => api(t, org.key).post(`/flags/${flag.body.id}/evaluate`).send({ context });
      expect((await evaluate({ region: 'eu-west' }).expect(200)).body).toEqual({ value: true, reason: 'TARGETING_MATCH', variant: 'eu' });
      expect((await evaluate({}).expect(200)).body).toEqual({ value: false, reason: 'DEFAULT', variant: 'default' });

      const reader = await createApiKey(t, org.id, [Permission.FLAGS_READ]);
      await api(t, reader.key).post(`/flags/${flag.body.id}/evaluate`).send({ context: {} }).expect(200);
      const viewer = await memberSignedIn(t, org.id, 'viewer');
      const asViewer = await asSession(t, viewer, org.id)
        .post(`/flags/${flag.body.id}/evaluate`)
        .send({ context: { region: 'eu-west' } })
        .expect(200);
      expect(asViewer.body).toEqual({ value: true, reason: 'TARGETING_MATCH', variant: 'eu' });
    });

    it('evaluates an archived flag as stored, and a flag without rules as STATIC', async () => {
      const flag = await createFlag(t, org.key, { key: 'f', type: 'number', value: 3 });
      await patch(flag.id, { archived: true }).expect(200);
      expect(
        (
          await api(t, org.key)
            .post(`/flags/${flag.id}/evaluate`)
            .send({ context: { a: 1 } })
            .expect(200)
        ).body,
      ).toEqual({
        value: 3,
        reason: 'STATIC',
        variant: 'default',
      });
    });

    it.each([
      ['no context', {}],
      ['a string context', { context: 'eu' }],
      ['an array context', { context: [] }],
      ['a null context', { context: null }],
    ])('answers 400 for %s, naming context', async (_case, body) => {
      const flag = await createFlag(t, org.key, { key: 'f' });
      expectApiError(await api(t, org.key).post(`/flags/${flag.id}/evaluate`).send(body), 400, 'VALIDATION_ERROR', /^context must be a JSON object/);
    });

    it('answers 404 for a flag of another organization, and 403 for a key without FLAGS_READ', async () => {
      const other = await createOrganization(t);
      const theirs = await createFlag(t, other.key, { key: 'f' });
      expectApiError(await api(t, org.key).post(`/flags/${theirs.id}/evaluate`).send({ context: {} }), 404, 'FLAG_NOT_FOUND');
      const writer = await createApiKey(t, org.id, [Permission.FLAGS_WRITE]);
      const mine = await createFlag(t, org.key, { key: 'f' });
      expect((await api(t, writer.key).post(`/flags/${mine.id}/evaluate`).send({ context: {} })).status).toBe(403);
    });
  });

  describe('restore, schedules, export and import carry the rules', () => {
    it("restores an entry's rules, and removes them when the entry has none", async () => {
      const flag = await createFlag(t, org.key, { key: 'f', type: 'boolean', value: false });
      await patch(flag.id, { rules: [EU] }).expect(200);
      await patch(flag.id, { rules: [CANARY] }).expect(200);
      const entries = await audit(flag.id);
      const withEu = entries.find((entry) => entry.after.rules?.[0]?.id === 'eu')!;
      const created = entries.find((entry) => entry.action === 'flag.create')!;
      const restored = await api(t, org.key).post(`/flags/${flag.id}/restore`).send({ auditEntryId: withEu.id }).expect(200);
      expect(restored.body.rules).toEqual([EU]);
      const bare = await api(t, org.key).post(`/flags/${flag.id}/restore`).send({ auditEntryId: created.id }).expect(200);
      expect(bare.body).not.toHaveProperty('rules');
    });

    it('schedules a rules change, checked against the flag’s type when it is made', async () => {
      const flag = await createFlag(t, org.key, { key: 'f', type: 'boolean', value: false });
      const at = new Date(Date.now() + 3_600_000).toISOString();
      const made = await api(t, org.key)
        .post(`/flags/${flag.id}/schedules`)
        .send({ at, change: { rules: [CANARY] } })
        .expect(201);
      expect(made.body.change).toEqual({ rules: [CANARY] });
      expectApiError(
        await api(t, org.key)
          .post(`/flags/${flag.id}/schedules`)
          .send({ at, change: { rules: [{ ...CANARY, value: 5 }] } }),
        400,
        'VALIDATION_ERROR',
        /^rules\[0\]\.value must be a boolean/,
      );
      expectApiError(
        await api(t, org.key)
          .post(`/flags/${flag.id}/schedules`)
          .send({ at, change: { rules: [{ ...CANARY, id: 'Bad' }] } }),
        400,
        'VALIDATION_ERROR',
        /rules\[0\]\.id must be 1-64 characters/,
      );
    });

    it('exports rules and imports them into another organization, naming a broken rule by flag and field', async () => {
      await api(t, org.key)
        .post('/flags')
        .send({ key: 'f', name: 'F', type: 'boolean', value: false, rules: [EU, CANARY] })
        .expect(201);
      await createFlag(t, org.key, { key: 'plain' });
      const exported = (await api(t, org.key).get('/flags/export').expect(200)).body;
      expect(exported.flags[0].rules).toEqual([EU, CANARY]);
      expect(exported.flags[1]).not.toHaveProperty('rules');

      const target = await createOrganization(t);
      const report = await api(t, target.key).post('/flags/import').send(exported).expect(200);
      expect(report.body.created).toEqual(['f', 'plain']);
      expect((await api(t, target.key).get('/flags/export').expect(200)).body).toEqual(exported);

      // A rules-only difference is an update, with before and after.
      const changed = { flags: [{ ...exported.flags[0], rules: [CANARY] }] };
      const update = await api(t, target.key)
        .post('/flags/import')
        .send({ ...changed, dryRun: true })
        .expect(200);
      expect(update.body.updated).toEqual([
        { key: 'f', before: expect.objectContaining({ rules: [EU, CANARY] }), after: expect.objectContaining({ rules: [CANARY] }) },
      ]);

      // An entry without rules means the flag has none: the import removes the target's.
      const { rules: _rules, ...withoutRules } = exported.flags[0];
      const removal = await api(t, target.key)
        .post('/flags/import')
        .send({ flags: [withoutRules] })
        .expect(200);
      expect(removal.body.updated).toEqual([
        { key: 'f', before: expect.objectContaining({ rules: [EU, CANARY] }), after: expect.not.objectContaining({ rules: expect.anything() }) },
      ]);
      expect((await api(t, target.key).get('/flags/export').expect(200)).body.flags[0]).not.toHaveProperty('rules');

      const broken = { flags: [{ ...exported.flags[0], rules: [{ ...EU, value: 'on' }] }] };
      expectApiError(
        await api(t, target.key).post('/flags/import').send(broken),
        400,
        'VALIDATION_ERROR',
        /^flags\[0\] \("f"\): rules\[0\]\.value must be a boolean/,
      );
    });
  });
});
