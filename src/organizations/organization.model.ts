import { Permission } from './permission';

export interface Organization {
  id: string;
  name: string;
  /** Bytes. */
  storageAllocation: number;
  createdAt: Date;
}

export interface ApiKey {
  id: string;
  organizationId: string;
  name: string;
  /** SHA-256 of the key; the key itself is shown once and never stored. */
  keyHash: string;
  permissions: Permission[];
  createdAt: Date;
  revokedAt: Date | null;
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
