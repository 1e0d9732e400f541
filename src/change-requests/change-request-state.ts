/**
 * The life of a change request (decisions.md, "Change requests (turn 5)"), as pure rules: which state a request is
 * in, who may do what to it, and where each action takes it. The service asks `decide` before it writes anything, so
 * the permission table lives here once, unit-tested, and nowhere else.
 */

export const CHANGE_REQUEST_STATES = ['open', 'approved', 'applied', 'declined', 'withdrawn', 'failed'] as const;
export type ChangeRequestState = (typeof CHANGE_REQUEST_STATES)[number];

/** The states a request can still move from: edited, reviewed, withdrawn or applied. */
export const PENDING_STATES: readonly ChangeRequestState[] = ['open', 'approved'];

/** What the organization's review setting says about reviews (`required` does not change how a request is reviewed). */
export interface ReviewRule {
  /** Approvals a request needs (1-5). */
  approvals: number;
  /** Whether an author may approve their own request. */
  selfApproval: boolean;
}

/** Who acts: a signed-in member (with their role), an API key, or the service itself (a scheduled apply). */
export type Actor =
  { type: 'session'; id: string; role: 'viewer' | 'editor' | 'admin' } | { type: 'apiKey'; id: string } | { type: 'system'; id: null };

/** What the rules need to know of a request. */
export interface RequestFacts {
  state: ChangeRequestState;
  author: { type: 'session' | 'apiKey'; id: string };
  /** The request's version: one more on every edit; reviews count for the version they were given on. */
  revision: number;
  /** The reviews of the current revision. */
  reviews: readonly { userId: string; decision: 'approve' | 'decline' }[];
}

export type Action =
  | { kind: 'review'; decision: 'approve' | 'decline' }
  | { kind: 'edit' }
  | { kind: 'withdraw' }
  | { kind: 'apply' }
  | { kind: 'override' }
  /** A scheduled apply the organization's rules refused. */
  | { kind: 'fail' };

export type RefusalCode =
  /** The actor may never do this to this request (403). */
  | 'CHANGE_REQUEST_FORBIDDEN'
  /** The request's state does not allow it (409). */
  | 'CHANGE_REQUEST_NOT_PENDING'
  | 'CHANGE_REQUEST_NOT_APPROVED'
  /** This person already reviewed this version (409). */
  | 'CHANGE_REQUEST_ALREADY_REVIEWED';

export type Decision = { allowed: true; next: ChangeRequestState } | { allowed: false; code: RefusalCode; reason: string };

const refuse = (code: RefusalCode, reason: string): Decision => ({ allowed: false, code, reason });

export function isAuthor(facts: RequestFacts, actor: Actor): boolean {
  return actor.type !== 'system' && facts.author.type === actor.type && facts.author.id === actor.id;
}

/** Approvals of the current revision. */
export function approvalCount(facts: RequestFacts): number {
  return facts.reviews.filter((review) => review.decision === 'approve').length;
}

/**
 * Whether `actor` may take `action` on the request, and the state it leaves it in. The route has already checked
 * the permission (FLAGS_WRITE to change a request); this is the rest of the table.
 */
export function decide(facts: RequestFacts, actor: Actor, action: Action, rule: ReviewRule): Decision {
  const pending = PENDING_STATES.includes(facts.state);
  switch (action.kind) {
    case 'review': {
      if (actor.type !== 'session') return refuse('CHANGE_REQUEST_FORBIDDEN', 'API keys never review: a member signed in reviews');
      if (actor.role === 'viewer') return refuse('CHANGE_REQUEST_FORBIDDEN', 'A viewer may not review: editors and admins review');
      if (isAuthor(facts, actor) && !rule.selfApproval) {
        return refuse(
          'CHANGE_REQUEST_FORBIDDEN',
          "The author may not review their own request (the organization's review setting: selfApproval is off)",
        );
      }
      if (!pending) return refuse('CHANGE_REQUEST_NOT_PENDING', `The request is ${facts.state}: only an open or approved request is reviewed`);
      if (facts.reviews.some((review) => review.userId === actor.id)) {
        return refuse('CHANGE_REQUEST_ALREADY_REVIEWED', 'You already reviewed this version of the request (an edit lets everyone review again)');
      }
      if (action.decision === 'decline') return { allowed: true, next: 'declined' };
      return { allowed: true, next: approvalCount(facts) + 1 >= rule.approvals ? 'approved' : 'open' };
    }
    case 'edit':
    case 'withdraw': {
      if (!isAuthor(facts, actor)) return refuse('CHANGE_REQUEST_FORBIDDEN', `Only the request's author may ${action.kind} it`);
      if (!pending)
        return refuse(
          'CHANGE_REQUEST_NOT_PENDING',
          `The request is ${facts.state}: only an open or approved request can be ${action.kind === 'edit' ? 'edited' : 'withdrawn'}`,
        );
      // An edit clears the approvals: the request is open again, whatever it was.
      return { allowed: true, next: action.kind === 'edit' ? 'open' : 'withdrawn' };
    }
    case 'apply': {
      if (actor.type === 'session' && actor.role === 'viewer') return refuse('CHANGE_REQUEST_FORBIDDEN', 'A viewer may not apply a request');
      if (facts.state !== 'approved') {
        return refuse('CHANGE_REQUEST_NOT_APPROVED', `The request is ${facts.state}: only an approved request is applied (an admin may override)`);
      }
      return { allowed: true, next: 'applied' };
    }
    case 'override': {
      if (actor.type !== 'session' || actor.role !== 'admin') {
        return refuse('CHANGE_REQUEST_FORBIDDEN', "Only an organization's admin, signed in, may apply a request without its approvals");
      }
      if (!pending) return refuse('CHANGE_REQUEST_NOT_PENDING', `The request is ${facts.state}: only an open or approved request is applied`);
      return { allowed: true, next: 'applied' };
    }
    case 'fail': {
      if (actor.type !== 'system') return refuse('CHANGE_REQUEST_FORBIDDEN', 'Only a scheduled apply fails a request');
      if (facts.state !== 'approved') return refuse('CHANGE_REQUEST_NOT_APPROVED', `The request is ${facts.state}`);
      return { allowed: true, next: 'failed' };
    }
  }
}

/** Whether the request waits for `actor`'s review (the list's `awaitingMe`): open, and `actor` may review it now. */
export function awaits(facts: RequestFacts, actor: Actor, rule: ReviewRule): boolean {
  return facts.state === 'open' && decide(facts, actor, { kind: 'review', decision: 'approve' }, rule).allowed;
}
