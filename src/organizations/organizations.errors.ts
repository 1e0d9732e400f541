import { HttpStatus } from '@nestjs/common';
import { DomainError } from '../common/domain-error';

export enum OrganizationsErrorCode {
  ORGANIZATION_NOT_FOUND = 'ORGANIZATION_NOT_FOUND',
  API_KEY_NOT_FOUND = 'API_KEY_NOT_FOUND',
  SUBSCRIPTION_NOT_FOUND = 'SUBSCRIPTION_NOT_FOUND',
  ORGANIZATION_DELETED = 'ORGANIZATION_DELETED',
}

export const OrganizationsErrors = {
  /** A write that took the organization's lock after its admins deleted it (DELETE /v1/organization): it writes nothing. */
  organizationDeleted: () =>
    new DomainError(HttpStatus.FORBIDDEN, OrganizationsErrorCode.ORGANIZATION_DELETED, 'This organization was deleted: nothing can be written to it'),
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
