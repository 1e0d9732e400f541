/** Examples for the OpenAPI document: the people routes' answers, as the service gives them. */

const MAYA = { id: '6f1c2a4e-8b3d-4c5e-9f10-2a3b4c5d6e7f', email: 'maya@acme.example', name: 'Maya Lin' };
const ACME = 'a3f1c9e2-4b7d-4e8a-9c1f-2d3e4f5a6b7c';

export const USER_EXAMPLE = { ...MAYA, createdAt: '2026-11-20T09:30:00.000Z', emailVerified: true };

export const USER_PAGE_EXAMPLE = { results: [USER_EXAMPLE], total: 1, page: 1, totalPages: 1 };

export const MEMBER_EXAMPLE = { userId: MAYA.id, email: MAYA.email, name: MAYA.name, role: 'admin', createdAt: '2026-11-20T09:30:00.000Z' };

export const MEMBER_LIST_EXAMPLE = {
  members: [
    MEMBER_EXAMPLE,
    {
      userId: 'c0ffee00-1234-4abc-8def-0123456789ab',
      email: 'sam@acme.example',
      name: 'Sam Ortiz',
      role: 'editor',
      createdAt: '2026-11-21T10:00:00.000Z',
    },
  ],
  former: [{ userId: 'b16b00b5-5678-4abc-8def-0123456789ab', name: 'Alex Kim', leftAt: '2026-11-22T16:45:00.000Z' }],
};

export const SESSION_EXAMPLE = {
  user: { ...MAYA, emailVerified: true, reviewMail: true },
  organizations: [{ id: ACME, name: 'Acme Games (production)', role: 'admin' }],
  csrfToken: 'kS3n2VdQ6oWw3C2m1Zf8bq0yX5uH7tJ9rL4pE6aB1cD',
  organizationCreation: { allowed: true, reason: null, created: 1, limit: 20 },
};

const INVITATION = {
  id: '9d8c7b6a-5f4e-4d3c-8b2a-1f0e9d8c7b6a',
  email: 'sam@acme.example',
  role: 'editor',
  createdAt: '2026-11-26T09:00:00.000Z',
  expiresAt: '2026-12-03T09:00:00.000Z',
};

export const INVITATION_LIST_EXAMPLE = [INVITATION];

export const CREATED_INVITATION_EXAMPLE = {
  ...INVITATION,
  url: 'https://flags.acme.example/console/invitations/Qm9vdHN0cmFwcGluZyBhIHRva2VuIGZvciB0aGUgZG9j',
};

export const ORGANIZATION_API_KEYS_EXAMPLE = [
  {
    id: '0b9e6f3a-2c1d-4e5f-8a7b-9c0d1e2f3a4b',
    name: 'game-server-eu',
    permissions: ['FLAGS_READ'],
    createdAt: '2026-11-20T09:35:00.000Z',
    revokedAt: null,
  },
  {
    id: '1c2d3e4f-5a6b-4c7d-8e9f-0a1b2c3d4e5f',
    name: 'old-build-pipeline',
    permissions: ['FLAGS_READ', 'STORAGE_WRITE'],
    createdAt: '2026-10-01T12:00:00.000Z',
    revokedAt: '2026-11-01T08:00:00.000Z',
  },
];

export const INVITATION_PREVIEW_EXAMPLE = {
  organization: { name: 'Acme Games' },
  role: 'editor',
  invitedBy: { name: MAYA.name },
  email: 'sam@acme.example',
  expiresAt: '2026-11-27T09:30:00.000Z',
};
