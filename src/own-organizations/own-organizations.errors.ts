import { HttpStatus } from '@nestjs/common';
import { DomainError } from '../common/domain-error';

export enum OwnOrganizationsErrorCode {
  ORGANIZATION_CREATION_OFF = 'ORGANIZATION_CREATION_OFF',
  ORGANIZATION_CREATION_ADMINS_ONLY = 'ORGANIZATION_CREATION_ADMINS_ONLY',
  ORGANIZATION_LIMIT = 'ORGANIZATION_LIMIT',
  COPY_MEMBERS_FORBIDDEN = 'COPY_MEMBERS_FORBIDDEN',
  ORGANIZATION_NOT_EMPTY = 'ORGANIZATION_NOT_EMPTY',
}

/** Why a signed-in user may not create an organization now: what the 403 says, and what the session body shows. */
export type CreationRefusal =
  | OwnOrganizationsErrorCode.ORGANIZATION_CREATION_OFF
  | OwnOrganizationsErrorCode.ORGANIZATION_CREATION_ADMINS_ONLY
  | OwnOrganizationsErrorCode.ORGANIZATION_LIMIT;

export const CREATION_REFUSALS: CreationRefusal[] = [
  OwnOrganizationsErrorCode.ORGANIZATION_CREATION_OFF,
  OwnOrganizationsErrorCode.ORGANIZATION_CREATION_ADMINS_ONLY,
  OwnOrganizationsErrorCode.ORGANIZATION_LIMIT,
];

export const OwnOrganizationsErrors = {
  refused: (refusal: CreationRefusal, limit: number) => new DomainError(HttpStatus.FORBIDDEN, refusal, refusalMessage(refusal, limit)),
  /** One answer whether the organization does not exist, is another's, or the caller is a member but not an admin there. */
  copyMembersForbidden: () =>
    new DomainError(
      HttpStatus.FORBIDDEN,
      OwnOrganizationsErrorCode.COPY_MEMBERS_FORBIDDEN,
      'copyMembersFrom must name an organization you administer',
    ),
  notEmpty: (flags: number, files: number) =>
    new DomainError(
      HttpStatus.CONFLICT,
      OwnOrganizationsErrorCode.ORGANIZATION_NOT_EMPTY,
      `Not deleted: the organization still has ${[count(flags, 'flag'), count(files, 'file')].filter((part) => part !== null).join(' and ')}. ` +
        'Delete its flags and files first (uploads in progress count as files)',
    ),
};

export function refusalMessage(refusal: CreationRefusal, limit: number): string {
  switch (refusal) {
    case OwnOrganizationsErrorCode.ORGANIZATION_CREATION_OFF:
      return 'This deployment does not let its users create organizations (ORGANIZATION_CREATION=off): ask its operator';
    case OwnOrganizationsErrorCode.ORGANIZATION_CREATION_ADMINS_ONLY:
      return 'Only an admin of an organization may create organizations on this deployment (ORGANIZATION_CREATION=admins)';
    case OwnOrganizationsErrorCode.ORGANIZATION_LIMIT:
      return `You have created ${limit} organizations, the most ORGANIZATIONS_PER_USER allows: delete one you no longer use, or ask the operator`;
  }
}

function count(n: number, noun: string): string | null {
  if (n === 0) return null;
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}
