import request from 'supertest';
import { createOrganization, TestOrganization } from '../factories/organizations.factory';
import { asSession, memberSignedIn, Role, SignedIn } from '../factories/people.factory';
import { createTestApp, TestApp } from '../support/test-app';

type Send = (session: ReturnType<typeof asSession>) => request.Test;

/**
 * The role table (README, "People and sessions"), route group by route group: each role gets the success its
 * permission allows, or 403. One request per group; a group is the routes that share a permission or a role.
 */
describe('roles x route groups, with a session', () => {
  let t: TestApp;
  let org: TestOrganization;
  const members = {} as Record<Role, SignedIn>;
  let flagId: string;
  let creationEntry: string;

  beforeAll(async () => {
    t = await createTestApp();
    org = await createOrganization(t);
    for (const role of ['viewer', 'editor', 'admin'] as const) members[role] = await memberSignedIn(t, org.id, role);
    const flag = await asSession(t, members.admin, org.id).post('/flags').send({ key: 'table', name: 'x', type: 'number', value: 1 }).expect(201);
    flagId = flag.body.id;
    creationEntry = (await asSession(t, members.admin, org.id).get(`/flags/audit?flagId=${flagId}`).expect(200)).body.results[0].id;
  });
  afterAll(() => t.close());

  const future = () => new Date(Date.now() + 86_400_000).toISOString();
  // [group, the least role allowed, the request, its success status]
  const groups: [string, Role, Send, number][] = [
    ['flags: list', 'viewer', (s) => s.get('/flags'), 200],
    ['flags: read one', 'viewer', (s) => s.get(`/flags/${flagId}`), 200],
    ['flags: config poll', 'viewer', (s) => s.get('/flags/config'), 200],
    ['flags: quota', 'viewer', (s) => s.get('/flags/quota'), 200],
    ['flags: audit', 'viewer', (s) => s.get('/flags/audit'), 200],
    ['flags: audit export', 'viewer', (s) => s.get('/flags/audit/export?format=csv'), 200],
    ['flags: schedules list', 'viewer', (s) => s.get(`/flags/${flagId}/schedules`), 200],
    [
      'flags: create',
      'editor',
      (s) => s.post('/flags').send({ key: `k${Math.random().toString(36).slice(2, 8)}`, name: 'x', type: 'boolean', value: true }),
      201,
    ],
    ['flags: edit', 'editor', (s) => s.patch(`/flags/${flagId}`).send({ name: 'renamed' }), 200],
    ['flags: restore', 'editor', (s) => s.post(`/flags/${flagId}/restore`).send({ auditEntryId: creationEntry }), 200],
    ['flags: schedule', 'editor', (s) => s.post(`/flags/${flagId}/schedules`).send({ at: future(), change: { name: 'later' } }), 201],
    ['storage: statistics', 'viewer', (s) => s.get('/storage'), 200],
    ['storage: items', 'viewer', (s) => s.get('/storage/items'), 200],
    ['storage: signed URL', 'editor', (s) => s.get('/storage/signed-url?contentType=image/png&size=10'), 200],
    ['storage: purge (dry run)', 'editor', (s) => s.delete('/storage/purge').send({ dryRun: true }), 200],
    ['people: members', 'viewer', (s) => s.get('/organization/members'), 200],
    ['people: a role', 'admin', (s) => s.patch(`/organization/members/${members.viewer.userId}`).send({ role: 'viewer' }), 200],
    ['people: invitations', 'admin', (s) => s.get('/organization/invitations'), 200],
    ['people: invite', 'admin', (s) => s.post('/organization/invitations').send({ email: 'table@studio.example', role: 'viewer' }), 201],
    ['keys: list', 'viewer', (s) => s.get('/organization/api-keys'), 200],
    ['keys: issue', 'admin', (s) => s.post('/organization/api-keys').send({ name: 'table', permissions: ['FLAGS_READ'] }), 201],
  ];
  const ORDER: Role[] = ['viewer', 'editor', 'admin'];

  it.each(groups)('%s: %s and above', async (_group, least, send, success) => {
    const statuses = {} as Record<Role, number>;
    for (const role of ORDER) statuses[role] = (await send(asSession(t, members[role], org.id))).status;
    const expected = Object.fromEntries(ORDER.map((role) => [role, ORDER.indexOf(role) >= ORDER.indexOf(least) ? success : 403]));
    expect(statuses).toEqual(expected);
  });
});
