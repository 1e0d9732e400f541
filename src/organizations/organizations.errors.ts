import { HttpStatus } from '@nestjs/common';
import { DomainError } from '../common/domain-error';

export enum OrganizationsErrorCode {
  ORGANIZATION_NOT_FOUND = 'ORGANIZATION_NOT_FOUND',
  API_KEY_NOT_FOUND = 'API_KEY_NOT_FOUND',
  SUBSCRIPTION_NOT_FOUND = 'SUBSCRIPTION_NOT_FOUND',
}

export const OrganizationsErrors = {
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
