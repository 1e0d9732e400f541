import { Permission } from '../../auth/permission';
import {
  ApiKeyDto,
  CreatedApiKeyDto,
  OrganizationDetailDto,
  OrganizationDto,
  OrganizationPageDto,
  OrganizationSettingsDto,
  SubscriptionDto,
} from './organization.dto';

/** What the admin API's documentation shows: made-up values of the real shapes (the OpenAPI test holds them to their schemas). */

const ORGANIZATION_ID = '3f1c9a2e-7b4d-4e8a-9c61-2d5f0b8e4a17';

export const ORGANIZATION_EXAMPLE: OrganizationDto = {
  id: ORGANIZATION_ID,
  name: 'Acme Games',
  storageAllocation: 1073741824,
  createdAt: '2026-11-02T09:15:00.000Z',
};

export const ORGANIZATION_PAGE_EXAMPLE: OrganizationPageDto = {
  results: [
    { id: '9b2e4c71-0d3a-4f6e-8a15-7c4d2e9f1b03', name: 'Acme Games Mobile', storageAllocation: 1073741824, createdAt: '2026-11-20T14:02:11.000Z' },
    ORGANIZATION_EXAMPLE,
  ],
  total: 2,
  page: 1,
  totalPages: 1,
};

export const CREATED_API_KEY_EXAMPLE: CreatedApiKeyDto = {
  id: 'c7a4e2d9-5b1f-4c3a-8e6d-0f9b2a7c4e18',
  name: 'game-server-eu',
  permissions: [Permission.FLAGS_READ],
  key: 'fsk_EXAMPLE-only-not-a-real-key-0123456789abcde',
  createdAt: '2026-11-02T09:16:30.000Z',
};

const LIVE_KEY: ApiKeyDto = {
  id: CREATED_API_KEY_EXAMPLE.id,
  name: CREATED_API_KEY_EXAMPLE.name,
  permissions: CREATED_API_KEY_EXAMPLE.permissions,
  createdAt: CREATED_API_KEY_EXAMPLE.createdAt,
  revokedAt: null,
};

export const SUBSCRIPTION_EXAMPLE: SubscriptionDto = {
  id: '5e8d1b3a-2c7f-4a9e-b6d0-4f1a8c3e7b25',
  plan: 'pro',
  status: 'active',
  createdAt: '2026-11-03T11:00:00.000Z',
};

/** An organization given 500 flags by the operator, with 620 (the 120 newest locked). */
export const ORGANIZATION_SETTINGS_EXAMPLE: OrganizationSettingsDto = {
  ...ORGANIZATION_EXAMPLE,
  flagAllowance: 500,
  flagQuota: { max: 500, used: 620, subscribed: true, locked: 120 },
};

export const ORGANIZATION_DETAIL_EXAMPLE: OrganizationDetailDto = {
  ...ORGANIZATION_EXAMPLE,
  flagAllowance: null,
  apiKeys: [
    LIVE_KEY,
    {
      id: 'a1d5f3c8-6e2b-4b7d-9f40-8c3e1a6d2b59',
      name: 'ci-old',
      permissions: [Permission.FLAGS_READ, Permission.FLAGS_WRITE],
      createdAt: '2026-11-02T09:20:00.000Z',
      revokedAt: '2026-11-18T16:45:12.000Z',
    },
  ],
  subscriptions: [{ ...SUBSCRIPTION_EXAMPLE, cancelledAt: null }],
  flagQuota: { max: 50, used: 12, subscribed: true, locked: 0 },
};

/** An organization created with its first admin. */
export const CREATED_ORGANIZATION_EXAMPLE = {
  ...ORGANIZATION_EXAMPLE,
  admin: { id: '6f1c2a4e-8b3d-4c5e-9f10-2a3b4c5d6e7f', email: 'maya@acme.example', name: 'Maya Lin' },
};
