import type { Request } from 'express';
import { Permission } from './permission';

/** Who is calling: an organization's API key. */
export interface Principal {
  keyId: string;
  organizationId: string;
  permissions: ReadonlySet<Permission>;
}

export interface AuthenticatedRequest extends Request {
  principal?: Principal;
}
