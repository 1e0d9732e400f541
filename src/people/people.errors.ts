import { HttpStatus } from '@nestjs/common';
import { DomainError } from '../common/domain-error';

export enum PeopleErrorCode {
  EMAIL_TAKEN = 'EMAIL_TAKEN',
  USER_NOT_FOUND = 'USER_NOT_FOUND',
  MEMBER_NOT_FOUND = 'MEMBER_NOT_FOUND',
  ALREADY_A_MEMBER = 'ALREADY_A_MEMBER',
  LAST_ADMIN = 'LAST_ADMIN',
  INVITATION_NOT_FOUND = 'INVITATION_NOT_FOUND',
  INVITATION_USED = 'INVITATION_USED',
  WRONG_CREDENTIALS = 'WRONG_CREDENTIALS',
  /** An invitation's acceptance that must come with the invited person's session (or create their account). */
  SIGN_IN_REQUIRED = 'SIGN_IN_REQUIRED',
}

export const PeopleErrors = {
  emailTaken: () => new DomainError(HttpStatus.CONFLICT, PeopleErrorCode.EMAIL_TAKEN, 'email: a user with this email already exists'),
  userNotFound: (userId: string) => new DomainError(HttpStatus.NOT_FOUND, PeopleErrorCode.USER_NOT_FOUND, `User ${userId} not found`),
  userWithEmailNotFound: (email: string) =>
    new DomainError(HttpStatus.NOT_FOUND, PeopleErrorCode.USER_NOT_FOUND, `email: no user has the email ${email}`),
  memberNotFound: (userId: string) =>
    new DomainError(HttpStatus.NOT_FOUND, PeopleErrorCode.MEMBER_NOT_FOUND, `User ${userId} is not a member of this organization`),
  alreadyAMember: () => new DomainError(HttpStatus.CONFLICT, PeopleErrorCode.ALREADY_A_MEMBER, 'This user is already a member of the organization'),
  emailAlreadyAMember: () =>
    new DomainError(HttpStatus.CONFLICT, PeopleErrorCode.ALREADY_A_MEMBER, 'email: a user with this email is already a member of the organization'),
  lastAdmin: () =>
    new DomainError(HttpStatus.CONFLICT, PeopleErrorCode.LAST_ADMIN, 'This is the organization’s last admin: make another member admin first'),
  lastAdminOf: (organizationIds: string[]) =>
    new DomainError(
      HttpStatus.CONFLICT,
      PeopleErrorCode.LAST_ADMIN,
      `This user is the last admin of organization ${organizationIds.join(', ')}: make another member admin first`,
    ),
  invitationNotFound: () =>
    new DomainError(HttpStatus.NOT_FOUND, PeopleErrorCode.INVITATION_NOT_FOUND, 'This invitation link is not valid: ask for a new one'),
  pendingInvitationNotFound: (invitationId: string) =>
    new DomainError(HttpStatus.NOT_FOUND, PeopleErrorCode.INVITATION_NOT_FOUND, `No pending invitation ${invitationId} in this organization`),
  invitationUsed: (why: 'accepted' | 'withdrawn' | 'expired') =>
    new DomainError(
      HttpStatus.GONE,
      PeopleErrorCode.INVITATION_USED,
      why === 'expired' ? 'This invitation has expired: ask for a new one' : `This invitation was ${why} already: ask for a new one`,
    ),
  /** One answer whether or not the invited email has an account, so that an inviter cannot learn which. */
  signInRequired: () =>
    new DomainError(
      HttpStatus.UNAUTHORIZED,
      PeopleErrorCode.SIGN_IN_REQUIRED,
      'Sign in as the invited person, or create the account: send name and password (a new account) or the invited person’s session',
    ),
  nameAndPasswordTogether: () =>
    new DomainError(HttpStatus.BAD_REQUEST, 'VALIDATION_ERROR', 'name and password go together: send both to create the account, or neither'),
  wrongCredentials: () => new DomainError(HttpStatus.UNAUTHORIZED, PeopleErrorCode.WRONG_CREDENTIALS, 'Wrong email or password'),
  wrongCurrentPassword: () => new DomainError(HttpStatus.BAD_REQUEST, 'VALIDATION_ERROR', 'currentPassword is not your current password'),
};
