import type { Request } from 'express';
import { Permission } from './permission';
import { Role } from './roles';

/**
 * Who is calling, on a route of one organization, whichever way they came in: an organization's API key, or a
 * signed-in user (a session) acting in one of their organizations with their role's permissions. Permission checks,
 * budgets and the audit log work on this alone, so no route needs to know which it was.
 */
export type Principal = ApiKeyPrincipal | SessionPrincipal;

interface PrincipalOf<Type extends 'apiKey' | 'session'> {
  /** The audit log's actorType. */
  readonly type: Type;
  /** The key's id or the user's: the audit log's actorId, and whose budgets the request spends. */
  readonly id: string;
  readonly organizationId: string;
  readonly permissions: ReadonlySet<Permission>;
}

export type ApiKeyPrincipal = PrincipalOf<'apiKey'>;

export interface SessionPrincipal extends PrincipalOf<'session'> {
  readonly role: Role;
  readonly sessionId: string;
}

/** A signed-in user, before any organization is named (the sign-in routes: the session, logout, password). */
export interface SignedInUser {
  readonly userId: string;
  readonly sessionId: string;
  /** What the session's changes must carry as X-CSRF-Token (the session body shows it). */
  readonly csrfToken: string;
}

export interface AuthenticatedRequest extends Request {
  principal?: Principal;
  /** Set on the signed-in user's own routes (@SignedIn()). */
  signedIn?: SignedInUser;
}
