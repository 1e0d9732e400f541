import { Role } from '../auth/roles';

export interface User {
  id: string;
  email: string;
  name: string;
  createdAt: Date;
  /** The person proved they read the email, a single sign-on provider vouched for it, or the operator made the user. */
  emailVerified: boolean;
  /** Whether they are mailed about change requests (on unless they turned it off). */
  reviewMail: boolean;
}

/** A user as sign-in reads them: with the stored password hash (null: single sign-on only). */
export interface UserWithPassword extends User {
  passwordHash: string | null;
}

/** A current member of an organization. */
export interface Membership {
  userId: string;
  email: string;
  name: string;
  role: Role;
  createdAt: Date;
}

export interface FormerMembership {
  userId: string;
  name: string;
  leftAt: Date;
}

/** One of a user's organizations, as the session body lists them. */
export interface UserOrganization {
  id: string;
  name: string;
  role: Role;
}

export interface Invitation {
  id: string;
  organizationId: string;
  email: string;
  role: Role;
  createdAt: Date;
  expiresAt: Date;
}

/** A single sign-on identity: the provider's `iss` and `sub`, linked to one user. */
export interface UserIdentity {
  issuer: string;
  subject: string;
}
