import request from 'supertest';
import { Contract, Exchange, OpenApiDocument } from '../support/contract';
import { createTestApp } from '../support/test-app';

const FLAG_ID = '6d4c81d2-5a34-4098-823a-acdcea7287b1';

function json(method: string, url: string, status: number, body: unknown): Exchange {
  return { method, url, status, contentType: 'application/json; charset=utf-8', body: Buffer.from(JSON.stringify(body)), truncated: false };
}

function flag(value: unknown) {
  return {
    id: FLAG_ID,
    key: 'k',
    name: 'K',
    description: null,
    type: 'json',
    value,
    runtime: 'shared',
    archived: false,
    locked: false,
    createdAt: '2026-11-23T10:00:00.000Z',
    updatedAt: '2026-11-23T10:00:00.000Z',
  };
}

// The check every e2e answer goes through (test/support/contract.ts), run on the served document against
// answers made up to break it: if it let any of these through, the suite's "0 mismatches" would mean nothing.
describe('the contract check', () => {
  let contract: Contract;
  beforeAll(async () => {
    const t = await createTestApp();
    const document = (await request(t.http).get('/docs-json').expect(200)).body as OpenApiDocument;
    await t.close();
    contract = new Contract(document);
  });

  it.each([true, 'text', 3, null, [1, 'two'], { nested: { ok: true } }])('accepts a flag whose value is %j', (value) => {
    expect(contract.check(json('GET', `/v1/flags/${FLAG_ID}`, 200, flag(value)))).toBeUndefined();
  });

  it('accepts null audit snapshots and refuses a snapshot of the wrong shape', () => {
    const entry = {
      id: FLAG_ID,
      flagId: null,
      flagKey: 'k',
      actorType: 'apiKey',
      actorId: FLAG_ID,
      action: 'flag.delete',
      before: null,
      after: null,
      createdAt: '2026-11-23T10:00:00.000Z',
    };
    const page = (results: unknown[]) => ({ results, total: results.length, page: 1, totalPages: 1 });
    expect(contract.check(json('GET', '/v1/flags/audit', 200, page([entry])))).toBeUndefined();
    expect(contract.check(json('GET', '/v1/flags/audit', 200, page([{ ...entry, before: 'yesterday' }])))).toMatch(/before/);
  });

  it('refuses a body that breaks its schema, naming the field', () => {
    const { name: _, ...nameless } = flag(true);
    expect(contract.check(json('GET', `/v1/flags/${FLAG_ID}`, 200, nameless))).toMatch(/must have required property 'name'/);
    expect(contract.check(json('GET', `/v1/flags/${FLAG_ID}`, 200, { ...flag(true), runtime: 'moon' }))).toMatch(/\/runtime must be equal to one of/);
  });

  it('refuses a status the operation does not document', () => {
    expect(contract.check(json('GET', '/v1/flags', 418, { statusCode: 418, error: 'TEAPOT', message: 'no' }))).toMatch(
      /does not document status 418/,
    );
  });

  it('refuses an error body of the wrong shape for its surface', () => {
    const apiShaped = { statusCode: 404, error: 'NOT_FOUND', message: 'gone' };
    expect(contract.check(json('DELETE', `/v1/storage/${FLAG_ID}`, 404, apiShaped))).toMatch(/does not match/);
    expect(contract.check(json('DELETE', `/v1/storage/${FLAG_ID}`, 404, { error: { code: 'NOT_FOUND', message: 'gone' } }))).toBeUndefined();
  });

  it("lets an unknown route answer only 404 with an error body, or the body parser's errors, which come before routing", () => {
    const unsupported = { statusCode: 415, error: 'UNSUPPORTED_MEDIA_TYPE', message: 'Request bodies must be JSON' };
    expect(contract.check(json('DELETE', '/v1/nothing-here', 415, unsupported))).toBeUndefined();
    expect(contract.check(json('DELETE', '/v1/nothing-here', 409, { ...unsupported, statusCode: 409 }))).toMatch(
      /no operation in the document matches/,
    );
    expect(contract.check(json('GET', '/v1/nothing-here', 404, { statusCode: 404, error: 'NOT_FOUND', message: 'Cannot GET' }))).toBeUndefined();
    expect(contract.check(json('GET', '/v1/nothing-here', 200, { ok: true }))).toMatch(/no operation in the document matches/);
    expect(contract.check(json('GET', '/v1/nothing-here', 404, { ok: true }))).toMatch(/matches none of/);
  });

  it('refuses a media type the status does not document, and accepts a file where any is', () => {
    const text: Exchange = { method: 'GET', url: '/v1/flags', status: 200, contentType: 'text/html', body: Buffer.from('<p>'), truncated: false };
    expect(contract.check(text)).toMatch(/answered text\/html/);
    const file: Exchange = { ...text, url: `/c/${FLAG_ID}/${FLAG_ID}`, contentType: 'image/png' };
    expect(contract.check(file)).toBeUndefined();
  });
});
