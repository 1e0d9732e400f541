export interface Organization {
  id: string;
  name: string;
  /** Bytes. */
  storageAllocation: number;
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
