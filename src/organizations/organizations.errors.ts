import { HttpStatus } from '@nestjs/common';
import { DomainError } from '../common/domain-error';

export enum OrganizationsErrorCode {
  ORGANIZATION_NOT_FOUND = 'ORGANIZATION_NOT_FOUND',
  API_KEY_NOT_FOUND = 'API_KEY_NOT_FOUND',
  SUBSCRIPTION_NOT_FOUND = 'SUBSCRIPTION_NOT_FOUND',
  VALIDATION_ERROR = 'VALIDATION_ERROR',
  ORGANIZATION_DELETED = 'ORGANIZATION_DELETED',
}

/** What a refusal of the first admin's fields names, so that the CLI can say which of its flags or variables to change. */
export interface FirstAdminRefusal {
  field: 'admin.name' | 'admin.password';
  userExists: boolean;
}

export function firstAdminRefusalOf(error: unknown): FirstAdminRefusal | undefined {
  if (!(error instanceof DomainError) || !('field' in error) || !('userExists' in error)) return undefined;
  return error as unknown as FirstAdminRefusal;
}

export const OrganizationsErrors = {
  /** A write that took the organization's lock after its admins deleted it (DELETE /v1/organization): it writes nothing. */
  organizationDeleted: () =>
    new DomainError(HttpStatus.FORBIDDEN, OrganizationsErrorCode.ORGANIZATION_DELETED, 'This organization was deleted: nothing can be written to it'),
  /** The admin API's `admin` names an existing user: they keep their password, and one sent for them is refused. */
  firstAdminPasswordForExistingUser: (email: string) =>
    Object.assign(
      new DomainError(
        HttpStatus.BAD_REQUEST,
        OrganizationsErrorCode.VALIDATION_ERROR,
        `admin.password must not be sent: a user with email ${email} exists and keeps their own password (send admin.email alone)`,
      ),
      { field: 'admin.password', userExists: true },
    ),
  /** A new user (no user has admin.email yet) needs a name and a password. */
  firstAdminFieldMissing: (field: 'admin.name' | 'admin.password') =>
    Object.assign(
      new DomainError(
        HttpStatus.BAD_REQUEST,
        OrganizationsErrorCode.VALIDATION_ERROR,
        `${field} must be a string: no user has this email yet, so a new one is created with admin.name and admin.password`,
      ),
      { field, userExists: false },
    ),
  nothingToUpdate: () =>
    new DomainError(
      HttpStatus.BAD_REQUEST,
      OrganizationsErrorCode.VALIDATION_ERROR,
      'storageAllocation or flagAllowance must be sent (a body with neither changes nothing)',
    ),
  organizationNotFound: (organizationId: string) =>
    new DomainError(HttpStatus.NOT_FOUND, OrganizationsErrorCode.ORGANIZATION_NOT_FOUND, `Organization ${organizationId} not found`),
  apiKeyNotFound: (keyId: string) =>
    new DomainError(HttpStatus.NOT_FOUND, OrganizationsErrorCode.API_KEY_NOT_FOUND, `No active API key ${keyId} in this organization`),
  subscriptionNotFound: (subscriptionId: string) =>
    new DomainError(
      HttpStatus.NOT_FOUND,
      OrganizationsErrorCode.SUBSCRIPTION_NOT_FOUND,
      `No active subscription ${subscriptionId} in this organization`,
    ),
};
