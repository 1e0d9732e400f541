import request from 'supertest';
import { api, createFlag } from '../factories/flags.factory';
import { bearer } from '../factories/organizations.factory';
import { expectApiError } from '../support/expect-error';
import { useTestApp } from '../support/test-suite';

/**
 * A json flag's value is the client's data: keys that mean something to JavaScript objects (`__proto__`,
 * `constructor`, `prototype`) are ordinary JSON keys there, stored and served as JSON (their content; object key order is not kept), never dropped.
 * Bodies are sent and read as JSON text: a JavaScript object literal with a `__proto__` key would set its
 * prototype instead of holding the key.
 */
const UNKNOWN = '00000000-0000-4000-8000-000000000000';

describe('json flag values keep every key', () => {
  const { t, org } = useTestApp({ subscribed: true });

  const VALUE =
    '{"__proto__":{"isAdmin":true},"constructor":{"prototype":{"polluted":1}},"prototype":[1,2],' +
    '"nested":{"__proto__":{"deep":true},"constructor":null,"list":[{"constructor":"c","__proto__":0}]},"plain":"kept"}';
  const OTHER = VALUE.replace('"isAdmin":true', '"isAdmin":false');

  /** A JSON value as sorted [key, value] pairs at every level: compared without any key being special. */
  const pairs = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(pairs);
    if (value === null || typeof value !== 'object') return value;
    return Object.keys(value)
      .sort()
      .map((key) => [key, pairs((value as Record<string, unknown>)[key])]);
  };
  const expectSameJson = (actual: unknown, json: string) => expect(pairs(actual)).toEqual(pairs(JSON.parse(json)));

  const send = (call: request.Test, body: string) => call.set('Content-Type', 'application/json').send(body);
  const create = (value = VALUE) => send(api(t, org.key).post('/flags'), `{"key":"proto","name":"Proto","type":"json","value":${value}}`);
  const poll = () => request(t.http).get('/v1/flags/config').set(bearer(org.key)).expect(200);
  const audit = async () => (await api(t, org.key).get('/flags/audit?flagKey=proto').expect(200)).body.results;

  it('stores and serves __proto__, constructor and prototype keys, nested ones included, on create', async () => {
    const created = await create().expect(201);
    expect(Object.keys(created.body.value).sort()).toEqual(['__proto__', 'constructor', 'nested', 'plain', 'prototype']);
    expectSameJson(created.body.value, VALUE);
    const { rows } = await t.db.query('SELECT value::text AS value FROM flags WHERE id = $1', [created.body.id]);
    expectSameJson(JSON.parse(rows[0].value), VALUE);
    expectSameJson((await api(t, org.key).get(`/flags/${created.body.id}`).expect(200)).body.value, VALUE);
    expectSameJson((await poll()).body.flags[0].value, VALUE);
    const [entry] = await audit();
    expect(entry).toMatchObject({ action: 'flag.create', before: null });
    expectSameJson(entry.after.value, VALUE);
    // Nothing leaked into the prototypes of the service's own objects.
    expect(({} as Record<string, unknown>).isAdmin).toBeUndefined();
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('sees a change under __proto__ as a value change: stored, audited, and a new ETag', async () => {
    const created = await create().expect(201);
    const etag = (await poll()).headers.etag;
    const updated = await send(api(t, org.key).patch(`/flags/${created.body.id}`), `{"type":"json","value":${OTHER}}`).expect(200);
    expectSameJson(updated.body.value, OTHER);
    expectSameJson((await api(t, org.key).get(`/flags/${created.body.id}`).expect(200)).body.value, OTHER);
    const polled = await poll();
    expect(polled.headers.etag).not.toBe(etag);
    expectSameJson(polled.body.flags[0].value, OTHER);
    const [entry] = await audit();
    expect(entry.action).toBe('flag.value.set');
    expectSameJson(entry.before.value, VALUE);
    expectSameJson(entry.after.value, OTHER);
    const exported = await api(t, org.key).get('/flags/audit/export?format=ndjson&flagKey=proto').expect(200);
    expectSameJson(JSON.parse(exported.text.split('\n')[1]).after.value, OTHER);
    // Resending the same value is no change at all.
    await send(api(t, org.key).patch(`/flags/${created.body.id}`), `{"type":"json","value":${OTHER}}`).expect(200);
    expect(await audit()).toHaveLength(2);
  });

  it('keeps them in a scheduled change', async () => {
    const flag = await createFlag(t, org.key, { key: 'scheduled', type: 'json', value: {} });
    const at = new Date(Date.now() + 3_600_000).toISOString();
    const body = `{"at":"${at}","change":{"type":"json","value":${VALUE}}}`;
    const scheduled = await send(api(t, org.key).post(`/flags/${flag.id}/schedules`), body).expect(201);
    expectSameJson(scheduled.body.change.value, VALUE);
    const listed = await api(t, org.key).get(`/flags/${flag.id}/schedules`).expect(200);
    expectSameJson(listed.body.results[0].change.value, VALUE);
  });

  // Outside a value, these keys are not fields of any body: refused like every unknown field, never dropped.
  it.each(['__proto__', 'constructor'])('refuses %s as a field of a flag body with 400 naming it', async (field) => {
    const created = await send(api(t, org.key).post('/flags'), `{"key":"k","name":"n","type":"boolean","value":true,"${field}":{"x":1}}`);
    expectApiError(created, 400, 'VALIDATION_ERROR', new RegExp(`^property ${field} should not exist$`));
    const flag = await createFlag(t, org.key, { key: 'edited' });
    const edited = await send(api(t, org.key).patch(`/flags/${flag.id}`), `{"name":"renamed","${field}":1}`);
    expectApiError(edited, 400, 'VALIDATION_ERROR', new RegExp(`^property ${field} should not exist$`));
    const at = new Date(Date.now() + 3_600_000).toISOString();
    const scheduled = await send(api(t, org.key).post(`/flags/${flag.id}/schedules`), `{"at":"${at}","change":{"name":"x","${field}":1}}`);
    expectApiError(scheduled, 400, 'VALIDATION_ERROR', new RegExp(`^property change\\.${field} should not exist$`));
    expect((await api(t, org.key).get(`/flags/${flag.id}`).expect(200)).body.name).toBe('Flag edited');
  });

  it("answers an object with such keys where a field takes no object with the field's own 400, never a 500", async () => {
    const named = await send(
      api(t, org.key).post('/flags'),
      '{"key":"k","name":{"constructor":{"a":1},"__proto__":1},"type":"boolean","value":true}',
    );
    expectApiError(named, 400, 'VALIDATION_ERROR', /^name must be a string$/);
    const typed = await send(api(t, org.key).post('/flags'), '{"key":"k","name":"n","type":{"constructor":"json"},"value":true}');
    expectApiError(typed, 400, 'VALIDATION_ERROR', /^type must be one of boolean, string, number, json$/);
    const changed = await send(
      api(t, org.key).post(`/flags/${UNKNOWN}/schedules`),
      '{"at":"2030-01-01T00:00:00Z","change":{"constructor":{"name":"x"}}}',
    );
    expectApiError(changed, 400, 'VALIDATION_ERROR', /^property change\.constructor should not exist$/);
  });
});
