import { createOrganization, subscribe, TestOrganization } from '../factories/organizations.factory';
import { asSession, memberSignedIn, SignedIn } from '../factories/people.factory';
import { expectApiError } from '../support/expect-error';
import { createTestApp, TestApp } from '../support/test-app';

const state = (value: unknown) => ({ name: 'XP', description: null, type: 'number', value, runtime: 'shared', archived: false });

/**
 * A change of the review setting settles the pending change requests again (issue 34): a request approved under
 * one approval is open again when two are needed, and one with enough approvals under a lower count is approved.
 */
describe('change requests when the review setting changes', () => {
  let t: TestApp;
  let org: TestOrganization;
  let admin: SignedIn;
  let author: SignedIn;
  let first: SignedIn;
  let second: SignedIn;

  beforeAll(async () => {
    t = await createTestApp();
    org = await createOrganization(t, 'Settled');
    await subscribe(t, org.id);
    admin = await memberSignedIn(t, org.id, 'admin');
    author = await memberSignedIn(t, org.id, 'editor');
    first = await memberSignedIn(t, org.id, 'editor');
    second = await memberSignedIn(t, org.id, 'editor');
  });
  afterAll(() => t.close());

  const as = (who: SignedIn) => asSession(t, who, org.id);
  const setting = (approvals: number, selfApproval = false) =>
    as(admin).put('/organization/review').send({ required: true, approvals, selfApproval }).expect(200);
  /** A request that creates the flag `key`. */
  const open = async (key: string) => {
    const response = await as(author)
      .post('/change-requests')
      .send({ title: `Change ${key}`, changes: [{ key, after: state(2) }] });
    expect(response.status).toBe(201);
    return response.body.id as string;
  };
  const stateOf = async (id: string) => (await as(admin).get(`/change-requests/${id}`).expect(200)).body.state;

  it('opens an approved request again when more approvals are needed, and it cannot be applied until it has them', async () => {
    await setting(1);
    const id = await open('raised');
    await as(first).post(`/change-requests/${id}/reviews`).send({ decision: 'approve' }).expect(201);
    expect(await stateOf(id)).toBe('approved');

    await setting(2);
    expect(await stateOf(id)).toBe('open');
    expectApiError(await as(author).post(`/change-requests/${id}/apply`).send({}), 409, 'CHANGE_REQUEST_NOT_APPROVED');
    expect((await as(second).get('/change-requests?awaitingMe=true').expect(200)).body.results.map((r: { id: string }) => r.id)).toContain(id);

    await as(second).post(`/change-requests/${id}/reviews`).send({ decision: 'approve' }).expect(201);
    expect(await stateOf(id)).toBe('approved');
    await as(author).post(`/change-requests/${id}/apply`).send({}).expect(200);
    expect(await stateOf(id)).toBe('applied');
  });

  it('approves a request that has enough approvals under a lower count, and counts the author only with self-approval', async () => {
    await setting(3, true);
    const id = await open('lowered');
    await as(author).post(`/change-requests/${id}/reviews`).send({ decision: 'approve' }).expect(201);
    await as(first).post(`/change-requests/${id}/reviews`).send({ decision: 'approve' }).expect(201);
    expect(await stateOf(id)).toBe('open');

    await setting(2, true);
    expect(await stateOf(id)).toBe('approved');
    // Without self-approval the author's own approval no longer counts: one of two.
    await setting(2, false);
    expect(await stateOf(id)).toBe('open');
    await setting(1, false);
    expect(await stateOf(id)).toBe('approved');
  });

  it('leaves decided requests as they are', async () => {
    await setting(1);
    const id = await open('declined');
    await as(first).post(`/change-requests/${id}/reviews`).send({ decision: 'decline' }).expect(201);
    await setting(2);
    await setting(1);
    expect(await stateOf(id)).toBe('declined');
  });
});
