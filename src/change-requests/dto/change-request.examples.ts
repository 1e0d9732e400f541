import { ChangeRequestDto, ChangeRequestPageDto } from './change-request.dto';

const AUTHOR = { type: 'session' as const, id: '0b3c5a8e-2f1d-4c6b-9e7a-1d2c3b4a5f60', name: 'Ada Producer' };
const REVIEWER = { id: '7e9f1a2b-3c4d-4e5f-8a6b-9c0d1e2f3a4b', name: 'Bo Designer' };
const XP = { name: 'XP multiplier', description: null, type: 'number' as const, runtime: 'shared' as const, archived: false };

/** An approved request, as GET /v1/change-requests/{id} answers it. */
export const CHANGE_REQUEST_EXAMPLE: ChangeRequestDto = {
  id: '5f1e2d3c-4b5a-4697-8877-665544332211',
  title: 'XP weekend: multiplier 2',
  description: 'Friday 18:00 to Monday 06:00',
  state: 'approved',
  author: AUTHOR,
  changes: [
    { key: 'xp-multiplier', flagId: '6d4c81d2-5a34-4098-823a-acdcea7287b1', before: { ...XP, value: 1 }, after: { ...XP, value: 2 }, version: 4 },
  ],
  reviews: [{ user: REVIEWER, decision: 'approve', comment: '2, not 20: good', at: '2026-12-04T16:02:00.000Z' }],
  approvalsNeeded: 1,
  applyAt: null,
  createdAt: '2026-12-04T15:55:00.000Z',
  updatedAt: '2026-12-04T16:02:00.000Z',
  appliedAt: null,
  override: null,
  failureReason: null,
  importReport: null,
  timeline: [
    { kind: 'opened', actor: AUTHOR, at: '2026-12-04T15:55:00.000Z' },
    { kind: 'approved', actor: { type: 'session', ...REVIEWER }, at: '2026-12-04T16:02:00.000Z', reason: '2, not 20: good' },
  ],
};

export const CHANGE_REQUEST_PAGE_EXAMPLE: ChangeRequestPageDto = {
  results: [
    {
      id: CHANGE_REQUEST_EXAMPLE.id,
      title: CHANGE_REQUEST_EXAMPLE.title,
      description: CHANGE_REQUEST_EXAMPLE.description,
      state: 'approved',
      author: AUTHOR,
      keys: ['xp-multiplier'],
      approvals: 1,
      applyAt: null,
      createdAt: CHANGE_REQUEST_EXAMPLE.createdAt,
      updatedAt: CHANGE_REQUEST_EXAMPLE.updatedAt,
      appliedAt: null,
    },
  ],
  total: 1,
  page: 1,
  totalPages: 1,
};

export const APPLIED_EXAMPLE: ChangeRequestDto = {
  ...CHANGE_REQUEST_EXAMPLE,
  state: 'applied',
  appliedAt: '2026-12-04T18:00:00.000Z',
  updatedAt: '2026-12-04T18:00:00.000Z',
  timeline: [...CHANGE_REQUEST_EXAMPLE.timeline, { kind: 'applied', actor: AUTHOR, at: '2026-12-04T18:00:00.000Z' }],
};
