import { Permission } from '../auth/permission';

export interface Organization {
  id: string;
  name: string;
  /** Bytes. */
  storageAllocation: number;
  /** Its own flag allowance, set by the operator; null: its level's. */
  flagAllowance: number | null;
  createdAt: Date;
}

export type SubscriptionStatus = 'active' | 'cancelled';

export interface Subscription {
  id: string;
  organizationId: string;
  plan: string;
  status: SubscriptionStatus;
  createdAt: Date;
  cancelledAt: Date | null;
}

/** An API key as the admin read-back shows it: never the key, never its hash. */
export interface ApiKeyRecord {
  id: string;
  name: string;
  permissions: Permission[];
  createdAt: Date;
  revokedAt: Date | null;
}
