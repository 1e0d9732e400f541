import { Transaction } from '../database/sql';
import { FirstAdminDto, FirstAdminUserDto } from './dto/organization.dto';

/**
 * Makes a user the first admin of an organization being created, in the creating transaction. People (users and
 * memberships) build on organizations, so organizations names what it needs and people provides it.
 */
export interface OrganizationFounder {
  found(tx: Transaction, organizationId: string, admin: FirstAdminDto): Promise<FirstAdminUserDto>;
}

export const ORGANIZATION_FOUNDER = Symbol('ORGANIZATION_FOUNDER');
