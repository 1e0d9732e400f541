import { Action, Actor, awaits, ChangeRequestState, decide, RequestFacts, ReviewRule } from './change-request-state';

const author: Actor = { type: 'session', id: 'author', role: 'editor' };
const editor: Actor = { type: 'session', id: 'editor', role: 'editor' };
const editor2: Actor = { type: 'session', id: 'editor2', role: 'editor' };
const admin: Actor = { type: 'session', id: 'admin', role: 'admin' };
const viewer: Actor = { type: 'session', id: 'viewer', role: 'viewer' };
const key: Actor = { type: 'apiKey', id: 'key' };
const system: Actor = { type: 'system', id: null };

const one: ReviewRule = { approvals: 1, selfApproval: false };
const two: ReviewRule = { approvals: 2, selfApproval: false };
const self: ReviewRule = { approvals: 1, selfApproval: true };

function facts(state: ChangeRequestState, reviews: RequestFacts['reviews'] = [], by: Actor = author): RequestFacts {
  return { state, author: { type: by.type as 'session' | 'apiKey', id: by.id! }, revision: 1, reviews };
}

const approve: Action = { kind: 'review', decision: 'approve' };
const decline: Action = { kind: 'review', decision: 'decline' };

describe('the change request state machine', () => {
  it('open → approved with enough approvals; one of two keeps it open', () => {
    expect(decide(facts('open'), editor, approve, one)).toEqual({ allowed: true, next: 'approved' });
    expect(decide(facts('open'), editor, approve, two)).toEqual({ allowed: true, next: 'open' });
    expect(decide(facts('open', [{ userId: 'editor', decision: 'approve' }]), editor2, approve, two)).toEqual({ allowed: true, next: 'approved' });
  });

  it('any decline declines, even an approved request', () => {
    expect(decide(facts('open'), editor, decline, one)).toEqual({ allowed: true, next: 'declined' });
    expect(decide(facts('approved', [{ userId: 'editor', decision: 'approve' }]), admin, decline, one)).toEqual({ allowed: true, next: 'declined' });
  });

  it('approved → applied by its author or any editor, not by a viewer; an open request is not applied', () => {
    for (const who of [author, editor, admin, key])
      expect(decide(facts('approved'), who, { kind: 'apply' }, one)).toEqual({ allowed: true, next: 'applied' });
    expect(decide(facts('approved'), viewer, { kind: 'apply' }, one)).toMatchObject({ allowed: false, code: 'CHANGE_REQUEST_FORBIDDEN' });
    for (const state of ['open', 'declined', 'withdrawn', 'applied', 'failed'] as const) {
      expect(decide(facts(state), author, { kind: 'apply' }, one)).toMatchObject({ allowed: false, code: 'CHANGE_REQUEST_NOT_APPROVED' });
    }
  });

  it('the author withdraws an open or approved request; nobody else does; a closed one stays closed', () => {
    expect(decide(facts('open'), author, { kind: 'withdraw' }, one)).toEqual({ allowed: true, next: 'withdrawn' });
    expect(decide(facts('approved'), author, { kind: 'withdraw' }, one)).toEqual({ allowed: true, next: 'withdrawn' });
    for (const who of [editor, admin, key])
      expect(decide(facts('open'), who, { kind: 'withdraw' }, one)).toMatchObject({ code: 'CHANGE_REQUEST_FORBIDDEN' });
    for (const state of ['declined', 'withdrawn', 'applied', 'failed'] as const) {
      expect(decide(facts(state), author, { kind: 'withdraw' }, one)).toMatchObject({ code: 'CHANGE_REQUEST_NOT_PENDING' });
    }
  });

  it('an edit (author only) reopens an approved request: its approvals are cleared', () => {
    expect(decide(facts('approved'), author, { kind: 'edit' }, one)).toEqual({ allowed: true, next: 'open' });
    expect(decide(facts('open'), author, { kind: 'edit' }, one)).toEqual({ allowed: true, next: 'open' });
    expect(decide(facts('open'), editor, { kind: 'edit' }, one)).toMatchObject({ code: 'CHANGE_REQUEST_FORBIDDEN' });
    expect(decide(facts('declined'), author, { kind: 'edit' }, one)).toMatchObject({ code: 'CHANGE_REQUEST_NOT_PENDING' });
  });

  it('a key may author, edit and withdraw its own request, but a key is never the same author as a person with its id', () => {
    const byKey = facts('open', [], key);
    expect(decide(byKey, key, { kind: 'edit' }, one)).toEqual({ allowed: true, next: 'open' });
    expect(decide(byKey, { type: 'session', id: 'key', role: 'admin' }, { kind: 'edit' }, one)).toMatchObject({ code: 'CHANGE_REQUEST_FORBIDDEN' });
  });

  it('the admin override applies an open or approved request; only an admin signed in', () => {
    expect(decide(facts('open'), admin, { kind: 'override' }, one)).toEqual({ allowed: true, next: 'applied' });
    expect(decide(facts('approved'), admin, { kind: 'override' }, one)).toEqual({ allowed: true, next: 'applied' });
    for (const who of [author, editor, viewer, key])
      expect(decide(facts('open'), who, { kind: 'override' }, one)).toMatchObject({ code: 'CHANGE_REQUEST_FORBIDDEN' });
    expect(decide(facts('declined'), admin, { kind: 'override' }, one)).toMatchObject({ code: 'CHANGE_REQUEST_NOT_PENDING' });
  });

  it('only a scheduled apply fails an approved request', () => {
    expect(decide(facts('approved'), system, { kind: 'fail' }, one)).toEqual({ allowed: true, next: 'failed' });
    expect(decide(facts('approved'), admin, { kind: 'fail' }, one)).toMatchObject({ allowed: false });
    expect(decide(facts('open'), system, { kind: 'fail' }, one)).toMatchObject({ allowed: false });
  });
});

describe('who may review', () => {
  it('keys never review', () => {
    expect(decide(facts('open'), key, approve, one)).toMatchObject({
      allowed: false,
      code: 'CHANGE_REQUEST_FORBIDDEN',
      reason: expect.stringMatching(/keys never review/i),
    });
  });

  it('viewers never review', () => {
    expect(decide(facts('open'), viewer, approve, one)).toMatchObject({ allowed: false, code: 'CHANGE_REQUEST_FORBIDDEN' });
  });

  it('the author reviews their own request only with selfApproval', () => {
    expect(decide(facts('open'), author, approve, one)).toMatchObject({ allowed: false, code: 'CHANGE_REQUEST_FORBIDDEN' });
    expect(decide(facts('open'), author, approve, self)).toEqual({ allowed: true, next: 'approved' });
  });

  it('once per person per version', () => {
    const reviewed = facts('open', [{ userId: 'editor', decision: 'approve' }]);
    expect(decide(reviewed, editor, approve, two)).toMatchObject({ allowed: false, code: 'CHANGE_REQUEST_ALREADY_REVIEWED' });
    expect(decide(reviewed, editor, decline, two)).toMatchObject({ allowed: false, code: 'CHANGE_REQUEST_ALREADY_REVIEWED' });
    // After an edit the reviews of the earlier version no longer count: the service passes the current version's only.
    expect(decide(facts('open', []), editor, approve, two)).toEqual({ allowed: true, next: 'open' });
  });

  it('a closed request is not reviewed', () => {
    for (const state of ['declined', 'withdrawn', 'applied', 'failed'] as const) {
      expect(decide(facts(state), editor, approve, one)).toMatchObject({ allowed: false, code: 'CHANGE_REQUEST_NOT_PENDING' });
    }
  });

  it('awaits: an open request the person may still review', () => {
    expect(awaits(facts('open'), editor, one)).toBe(true);
    expect(awaits(facts('open'), author, one)).toBe(false);
    expect(awaits(facts('open'), author, self)).toBe(true);
    expect(awaits(facts('open', [{ userId: 'editor', decision: 'approve' }]), editor, two)).toBe(false);
    expect(awaits(facts('approved'), editor2, one)).toBe(false);
    expect(awaits(facts('open'), viewer, one)).toBe(false);
    expect(awaits(facts('open'), key, one)).toBe(false);
  });
});
