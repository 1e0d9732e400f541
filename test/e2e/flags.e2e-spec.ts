import request from 'supertest';
import { Permission } from '../../src/auth/permission';
import { api, createFlag, flagBody, storedFlagVersion } from '../factories/flags.factory';
import { createApiKey, createOrganization } from '../factories/organizations.factory';
import { expectApiError } from '../support/expect-error';
import { useTestApp } from '../support/test-suite';

const UNKNOWN_ID = '00000000-0000-4000-8000-000000000000';

describe('flags API', () => {
  // Subscribed: room for the validation cases; the allowance has its own suite.
  const { t, org } = useTestApp({ subscribed: true });

  describe('POST /flags', () => {
    it('creates a flag with defaults and answers the management view', async () => {
      const response = await api(t, org.key).post('/flags').send({ key: 'double-xp', name: 'Double XP', type: 'boolean', value: false }).expect(201);
      expect(response.body).toEqual({
        id: expect.stringMatching(/^[0-9a-f-]{36}$/),
        key: 'double-xp',
        name: 'Double XP',
        description: null,
        type: 'boolean',
        value: false,
        runtime: 'shared',
        archived: false,
        locked: false,
        createdAt: expect.any(String),
        updatedAt: expect.any(String),
      });
      const { rows } = await t.db.query('SELECT key, value, runtime, organization_id FROM flags WHERE id = $1', [response.body.id]);
      expect(rows).toEqual([{ key: 'double-xp', value: false, runtime: 'shared', organization_id: org.id }]);
    });

    it.each([
      ['boolean', true],
      ['string', ''],
      ['string', 'hello'],
      ['number', 0],
      ['number', -12.5],
      ['json', null],
      ['json', { drops: [1, 2, { rare: true }] }],
      ['json', [1, 'two']],
      ['json', 'a json string'],
    ])('accepts a %s value %j and stores it as sent', async (type, value) => {
      const response = await api(t, org.key)
        .post('/flags')
        .send({ key: `k-${type}`, name: 'n', type, value, runtime: 'server', description: 'd' })
        .expect(201);
      expect(response.body).toMatchObject({ type, value, runtime: 'server', description: 'd' });
      const { rows } = await t.db.query('SELECT value FROM flags WHERE id = $1', [response.body.id]);
      expect(rows[0].value).toEqual(value);
    });

    it.each([
      ['key uppercase', { key: 'Bad' }, /key must match/],
      ['key starting with -', { key: '-bad' }, /key must match/],
      ['key starting with _', { key: '_bad' }, /key must match/],
      ['key with a space', { key: 'a b' }, /key must match/],
      ['key empty', { key: '' }, /key must be longer than or equal to 1/],
      ['key of 65 chars', { key: 'a'.repeat(65) }, /key must be shorter than or equal to 64/],
      ['key missing', { key: undefined }, /key/],
      ['name empty', { name: '' }, /name must be between 1 and 100 characters long/],
      ['name of 101 chars', { name: 'n'.repeat(101) }, /name must be between 1 and 100 characters long/],
      // PostgreSQL counts code points; so must validation (class-validator's Length skips U+FE0F).
      ['name of 100 characters with variation selectors', { name: 'a\uFE0F'.repeat(100) }, /name must be between 1 and 100/],
      ['description of 501 chars', { description: 'd'.repeat(501) }, /description must be at most 500 characters long/],
      ['description of 500 characters with variation selectors', { description: '\u2764\uFE0F'.repeat(300) }, /description must be at most 500/],
      ['unknown type', { type: 'date' }, /type must be one of boolean, string, number, json/],
      ['boolean given a string', { type: 'boolean', value: 'true' }, /value must be a boolean/],
      ['number given a string', { type: 'number', value: '1' }, /value must be a finite number/],
      ['string given a number', { type: 'string', value: 1 }, /value must be a string/],
      ['boolean given null', { type: 'boolean', value: null }, /value must be a boolean/],
      ['value missing', { value: undefined }, /value is required/],
      ['value over 4 KB', { type: 'string', value: 'x'.repeat(4095) }, /value must be at most 4096 bytes/],
      ['value 5 levels deep', { type: 'json', value: { a: { b: { c: { d: { e: 1 } } } } } }, /value must nest at most 4 levels/],
      ['unknown runtime', { runtime: 'client' }, /runtime must be one of shared, server/],
      ['unknown property', { color: 'red' }, /property color should not exist/],
      // PostgreSQL cannot store NUL in text or jsonb: refused up front rather than failing at the database.
      ['a NUL in the name', { name: 'a\u0000b' }, /^name must not contain the NUL character/],
      ['a NUL in the description', { description: 'd\u0000' }, /^description must not contain the NUL character/],
      ['a NUL in a string value', { type: 'string', value: 'v\u0000' }, /^value must not contain the NUL character/],
      ['a NUL in a JSON value', { type: 'json', value: { list: ['\u0000'] } }, /^value\.list\[0\] must not contain/],
      ['a NUL in a JSON key', { type: 'json', value: { ['k\u0000']: 1 } }, /^value\.k\\u0000 \(a key\) must not contain/],
      [
        'a value nested 3000 levels deep',
        { type: 'json', value: JSON.parse('['.repeat(3000) + ']'.repeat(3000)) },
        /^value(\[0\])+ nests deeper than 32 levels/,
      ],
    ])('rejects %s with 400 naming the field', async (_case, override, message) => {
      const body = { ...flagBody({ key: 'valid-key' }), ...override };
      const response = await api(t, org.key).post('/flags').send(body).expect(400);
      expect(response.body).toEqual({ statusCode: 400, error: 'VALIDATION_ERROR', message: expect.stringMatching(message) });
      const { rows } = await t.db.query('SELECT count(*)::int AS n FROM flags WHERE organization_id = $1', [org.id]);
      expect(rows[0].n).toBe(0);
    });

    it('accepts a value of exactly 4 KB and exactly 4 levels', async () => {
      await api(t, org.key)
        .post('/flags')
        .send(flagBody({ key: 'big', type: 'string', value: 'x'.repeat(4094) }))
        .expect(201);
      await api(t, org.key)
        .post('/flags')
        .send(flagBody({ key: 'deep', type: 'json', value: { a: { b: { c: { d: 1 } } } } }))
        .expect(201);
    });

    it('rejects a body that is not JSON with 400', async () => {
      const response = await api(t, org.key).post('/flags').set('Content-Type', 'application/json').send('{"key":');
      expectApiError(response, 400, 'VALIDATION_ERROR', /^Request body is not valid JSON/);
    });

    it('answers 409 with a message when the key is taken, archived keys included', async () => {
      const flag = await createFlag(t, org.key, { key: 'taken' });
      const taken = await api(t, org.key)
        .post('/flags')
        .send(flagBody({ key: 'taken' }))
        .expect(409);
      expect(taken.body).toEqual({ statusCode: 409, error: 'FLAG_KEY_TAKEN', message: expect.stringMatching(/already exists/) });
      await api(t, org.key).patch(`/flags/${flag.id}`).send({ archived: true }).expect(200);
      const archived = await api(t, org.key)
        .post('/flags')
        .send(flagBody({ key: 'taken' }))
        .expect(409);
      expect(archived.body.message).toMatch(/already exists/);
    });

    it('lets two organizations use the same key', async () => {
      const other = await createOrganization(t);
      await createFlag(t, org.key, { key: 'shared-key' });
      await createFlag(t, other.key, { key: 'shared-key' });
    });

    it('answers 401 without a key and 403 for a key lacking FLAGS_WRITE', async () => {
      await request(t.http)
        .post('/v1/flags')
        .send(flagBody({ key: 'x' }))
        .expect(401);
      const reader = await createApiKey(t, org.id, [Permission.FLAGS_READ]);
      const response = await api(t, reader.key)
        .post('/flags')
        .send(flagBody({ key: 'x' }))
        .expect(403);
      expect(response.body.message).toMatch(/FLAGS_WRITE/);
    });
  });

  describe('GET /flags', () => {
    it('lists newest first with the quota, paginated', async () => {
      for (const key of ['one', 'two', 'three']) await createFlag(t, org.key, { key });
      const page1 = await api(t, org.key).get('/flags?limit=2').expect(200);
      expect(page1.body).toEqual({
        results: [expect.objectContaining({ key: 'three' }), expect.objectContaining({ key: 'two' })],
        quota: { max: 50, used: 3, subscribed: true, locked: 0 },
        total: 3,
        page: 1,
        totalPages: 2,
      });
      const page2 = await api(t, org.key).get('/flags?limit=2&page=2').expect(200);
      expect(page2.body.results.map((flag: { key: string }) => flag.key)).toEqual(['one']);
      const beyond = await api(t, org.key).get('/flags?limit=2&page=5').expect(200);
      expect(beyond.body).toMatchObject({ results: [], total: 3, page: 5, totalPages: 2 });
    });

    it('defaults to 20 per page', async () => {
      for (let i = 0; i < 21; i += 1) await createFlag(t, org.key, { key: `f${i}` });
      const response = await api(t, org.key).get('/flags').expect(200);
      expect(response.body.results).toHaveLength(20);
      expect(response.body).toMatchObject({ total: 21, page: 1, totalPages: 2 });
    });

    it('searches key and name case-insensitively, treating % and _ literally', async () => {
      await createFlag(t, org.key, { key: 'loot-boost', name: 'Loot' });
      await createFlag(t, org.key, { key: 'xp', name: 'Weekend BOOST' });
      await createFlag(t, org.key, { key: 'other', name: 'Other' });
      await createFlag(t, org.key, { key: 'with_underscore', name: '100% fun' });
      const boost = await api(t, org.key).get('/flags?search=BoOsT').expect(200);
      expect(boost.body.results.map((flag: { key: string }) => flag.key).sort()).toEqual(['loot-boost', 'xp']);
      expect(boost.body.total).toBe(2);
      const percent = await api(t, org.key)
        .get(`/flags?search=${encodeURIComponent('0%')}`)
        .expect(200);
      expect(percent.body.results.map((flag: { key: string }) => flag.key)).toEqual(['with_underscore']);
      const underscore = await api(t, org.key).get('/flags?search=h_u').expect(200);
      expect(underscore.body.results.map((flag: { key: string }) => flag.key)).toEqual(['with_underscore']);
    });

    it.each([
      ['true', true],
      ['1', true],
      ['false', false],
      ['0', false],
    ])('includeArchived=%s decides whether archived flags are listed', async (raw, included) => {
      const flag = await createFlag(t, org.key, { key: 'old' });
      await createFlag(t, org.key, { key: 'live' });
      await api(t, org.key).patch(`/flags/${flag.id}`).send({ archived: true }).expect(200);
      const response = await api(t, org.key).get(`/flags?includeArchived=${raw}`).expect(200);
      expect(response.body.results.map((f: { key: string }) => f.key)).toEqual(included ? ['live', 'old'] : ['live']);
      expect(response.body.quota.used).toBe(2);
    });

    it.each([
      ['includeArchived=yes', /includeArchived must be one of true, false, 1, 0/],
      ['limit=0', /limit must not be less than 1/],
      ['limit=101', /limit must not be greater than 100/],
      ['page=0', /page must not be less than 1/],
      ['page=abc', /page must be an integer/],
      ['sort=key', /^Unknown query parameter "sort": this operation takes only search, includeArchived, page, limit$/],
      ['search=%00', /^search must not contain the NUL character/],
      ['page=1000000001', /page must not be greater than 1000000000/],
      ['page=99999999999999999999', /page must be an integer number/],
      ['page=0x10', /page must be an integer number/],
      ['limit=', /limit must be an integer number/],
    ])('rejects %s with 400', async (query, message) => {
      const response = await api(t, org.key).get(`/flags?${query}`).expect(400);
      expect(response.body.message).toMatch(message);
    });

    it('shows only the caller organization flags', async () => {
      const other = await createOrganization(t);
      await createFlag(t, other.key, { key: 'theirs' });
      await createFlag(t, org.key, { key: 'mine' });
      const response = await api(t, org.key).get('/flags').expect(200);
      expect(response.body.results.map((flag: { key: string }) => flag.key)).toEqual(['mine']);
    });

    it('answers 403 for a key lacking FLAGS_READ', async () => {
      const writer = await createApiKey(t, org.id, [Permission.FLAGS_WRITE]);
      const response = await api(t, writer.key).get('/flags').expect(403);
      expect(response.body.message).toMatch(/FLAGS_READ/);
    });
  });

  describe('GET /flags/:flagId', () => {
    it('reads one flag', async () => {
      const flag = await createFlag(t, org.key, { key: 'one', type: 'json', value: { a: 1 } });
      const response = await api(t, org.key).get(`/flags/${flag.id}`).expect(200);
      expect(response.body).toMatchObject({ id: flag.id, key: 'one', type: 'json', value: { a: 1 }, locked: false });
    });

    it('answers 400 for a malformed UUID, 404 for an unknown flag or one of another organization', async () => {
      const bad = await api(t, org.key).get('/flags/not-a-uuid').expect(400);
      expect(bad.body.message).toMatch(/flagId must be a valid UUID/);
      const missing = await api(t, org.key).get(`/flags/${UNKNOWN_ID}`);
      expectApiError(missing, 404, 'FLAG_NOT_FOUND', new RegExp(`^Flag ${UNKNOWN_ID} not found`));
      const other = await createOrganization(t);
      const theirs = await createFlag(t, other.key, { key: 'theirs' });
      const notOurs = await api(t, org.key).get(`/flags/${theirs.id}`);
      expectApiError(notOurs, 404, 'FLAG_NOT_FOUND', new RegExp(`^Flag ${theirs.id} not found`));
    });

    it('answers 401 and 403', async () => {
      const flag = await createFlag(t, org.key, { key: 'one' });
      await request(t.http).get(`/v1/flags/${flag.id}`).expect(401);
      const storageOnly = await createApiKey(t, org.id, [Permission.STORAGE_READ]);
      await api(t, storageOnly.key).get(`/flags/${flag.id}`).expect(403);
    });

    it('does not mistake the literal routes for a flag id', async () => {
      await api(t, org.key).get('/flags/quota').expect(200);
      await api(t, org.key).get('/flags/audit').expect(200);
      await api(t, org.key).get('/flags/config').expect(200);
    });
  });

  describe('PATCH /flags/:flagId', () => {
    it('changes name and description, and null clears the description', async () => {
      const flag = await createFlag(t, org.key, { key: 'k', description: 'first' });
      const renamed = await api(t, org.key).patch(`/flags/${flag.id}`).send({ name: 'Renamed', description: null }).expect(200);
      expect(renamed.body).toMatchObject({ key: 'k', name: 'Renamed', description: null });
      expect(Date.parse(renamed.body.updatedAt)).toBeGreaterThanOrEqual(Date.parse(renamed.body.createdAt));
      const { rows } = await t.db.query('SELECT name, description FROM flags WHERE id = $1', [flag.id]);
      expect(rows[0]).toEqual({ name: 'Renamed', description: null });
    });

    it('changes type and value together, and runtime', async () => {
      const flag = await createFlag(t, org.key, { key: 'k' });
      const response = await api(t, org.key).patch(`/flags/${flag.id}`).send({ type: 'number', value: 3, runtime: 'server' }).expect(200);
      expect(response.body).toMatchObject({ type: 'number', value: 3, runtime: 'server' });
    });

    it.each([
      ['type alone', { type: 'string' }, /type and value must be sent together/],
      ['value alone', { value: false }, /type and value must be sent together/],
      ['value null alone', { value: null }, /type and value must be sent together/],
      ['a value not matching type', { type: 'number', value: 'x' }, /value must be a finite number/],
      ['the key', { key: 'new-key' }, /key cannot be changed/],
      ['an empty name', { name: '' }, /name must be between 1 and 100 characters long/],
      ['a null name', { name: null }, /name must be a string/],
      ['a bad runtime', { runtime: 'everywhere' }, /runtime must be one of/],
      ['a non-boolean archived', { archived: 'yes' }, /archived must be a boolean/],
    ])('rejects %s with 400', async (_case, body, message) => {
      const flag = await createFlag(t, org.key, { key: 'k' });
      const response = await api(t, org.key).patch(`/flags/${flag.id}`).send(body).expect(400);
      expect(response.body.message).toMatch(message);
      const { rows } = await t.db.query('SELECT key, type, value FROM flags WHERE id = $1', [flag.id]);
      expect(rows[0]).toEqual({ key: 'k', type: 'boolean', value: true });
    });

    it('archives and restores; a value change of an archived flag answers 409', async () => {
      const flag = await createFlag(t, org.key, { key: 'k' });
      const archived = await api(t, org.key).patch(`/flags/${flag.id}`).send({ archived: true }).expect(200);
      expect(archived.body.archived).toBe(true);
      const conflict = await api(t, org.key).patch(`/flags/${flag.id}`).send({ type: 'boolean', value: false }).expect(409);
      expect(conflict.body).toEqual({ statusCode: 409, error: 'ARCHIVED_FLAG_VALUE', message: expect.stringMatching(/archived/) });
      // Resending the current value is no change, so it is not refused.
      await api(t, org.key).patch(`/flags/${flag.id}`).send({ type: 'boolean', value: true }).expect(200);
      // Renaming an archived flag is fine.
      await api(t, org.key).patch(`/flags/${flag.id}`).send({ name: 'Still archived' }).expect(200);
      const restored = await api(t, org.key).patch(`/flags/${flag.id}`).send({ archived: false, type: 'boolean', value: false }).expect(200);
      expect(restored.body).toMatchObject({ archived: false, value: false });
    });

    it('answers 200 with the flag for a change that changes nothing, and writes nothing', async () => {
      const flag = await createFlag(t, org.key, { key: 'k' });
      const stored = () => storedFlagVersion(t, flag.id);
      const before = await stored();
      const response = await api(t, org.key).patch(`/flags/${flag.id}`).send({}).expect(200);
      expect(response.body).toMatchObject({ id: flag.id, key: 'k', value: true, updatedAt: flag.updatedAt });
      await api(t, org.key).patch(`/flags/${flag.id}`).send({ name: 'Flag k', type: 'boolean', value: true }).expect(200);
      expect(await stored()).toEqual(before);
    });

    it('answers 400, 404, 401 and 403 like the read', async () => {
      const flag = await createFlag(t, org.key, { key: 'k' });
      await api(t, org.key).patch('/flags/nope').send({ name: 'x' }).expect(400);
      await api(t, org.key).patch(`/flags/${UNKNOWN_ID}`).send({ name: 'x' }).expect(404);
      const other = await createOrganization(t);
      await api(t, other.key).patch(`/flags/${flag.id}`).send({ name: 'x' }).expect(404);
      await request(t.http).patch(`/v1/flags/${flag.id}`).send({ name: 'x' }).expect(401);
      const reader = await createApiKey(t, org.id, [Permission.FLAGS_READ]);
      await api(t, reader.key).patch(`/flags/${flag.id}`).send({ name: 'x' }).expect(403);
      const { rows } = await t.db.query('SELECT name FROM flags WHERE id = $1', [flag.id]);
      expect(rows[0].name).toBe('Flag k');
    });
  });

  describe('DELETE /flags/:flagId', () => {
    it('deletes permanently and frees the key', async () => {
      const flag = await createFlag(t, org.key, { key: 'gone' });
      const response = await api(t, org.key).delete(`/flags/${flag.id}`).expect(204);
      expect(response.text).toBe('');
      await api(t, org.key).get(`/flags/${flag.id}`).expect(404);
      await api(t, org.key).delete(`/flags/${flag.id}`).expect(404);
      await createFlag(t, org.key, { key: 'gone' });
    });

    it('answers 400 for a malformed UUID, 404 for another organization, 401 and 403', async () => {
      const flag = await createFlag(t, org.key, { key: 'k' });
      await api(t, org.key).delete('/flags/123').expect(400);
      const other = await createOrganization(t);
      await api(t, other.key).delete(`/flags/${flag.id}`).expect(404);
      await request(t.http).delete(`/v1/flags/${flag.id}`).expect(401);
      const reader = await createApiKey(t, org.id, [Permission.FLAGS_READ]);
      await api(t, reader.key).delete(`/flags/${flag.id}`).expect(403);
      await api(t, org.key).get(`/flags/${flag.id}`).expect(200);
    });
  });
});
