import { ActorType } from '../../audit/audit-entry';
import { QUOTA_EXAMPLE } from '../../quota/dto/quota.examples';
import { FlagAction, FlagSnapshot } from '../flag.model';
import { FlagScheduleDto, FlagSchedulePageDto } from '../schedules/dto/flag-schedule.dto';
import { AuditPageDto, FeatureFlagAuditEntryDto } from './flag-audit.dto';
import { FeatureFlagDto, FlagPageDto } from './flag.dto';

/**
 * What the flag operations' documentation shows: one story (a Double XP weekend) in the real shapes, with made-up
 * ids. The OpenAPI test holds every example to its schema.
 */

export const FLAG_ID = '6d4c81d2-5a34-4098-823a-acdcea7287b1';
const API_KEY_ID = 'c7a4e2d9-5b1f-4c3a-8e6d-0f9b2a7c4e18';

export const FLAG_EXAMPLE: FeatureFlagDto = {
  id: FLAG_ID,
  key: 'double-xp-weekend',
  name: 'Double XP weekend',
  description: 'Doubles XP from matches while the event runs',
  type: 'boolean',
  value: true,
  runtime: 'shared',
  archived: false,
  locked: false,
  createdAt: '2026-11-23T10:00:00.000Z',
  updatedAt: '2026-11-27T18:00:00.000Z',
};

const LOOT_TABLE_EXAMPLE: FeatureFlagDto = {
  id: '0b7e3f92-1c4d-4a8b-9e25-6f1d8c3a7b40',
  key: 'loot-table',
  name: 'Loot table',
  description: null,
  type: 'json',
  value: { common: 0.7, rare: 0.25, legendary: 0.05 },
  runtime: 'server',
  archived: false,
  locked: false,
  createdAt: '2026-11-20T08:30:00.000Z',
  updatedAt: '2026-11-20T08:30:00.000Z',
};

export const FLAG_PAGE_EXAMPLE: FlagPageDto = {
  results: [FLAG_EXAMPLE, LOOT_TABLE_EXAMPLE],
  quota: QUOTA_EXAMPLE,
  total: 2,
  page: 1,
  totalPages: 1,
};

const BEFORE: FlagSnapshot = {
  name: FLAG_EXAMPLE.name,
  description: FLAG_EXAMPLE.description,
  type: 'boolean',
  value: false,
  runtime: 'shared',
  archived: false,
};

function auditEntry(id: string, action: FlagAction, actorType: ActorType, before: FlagSnapshot | null, createdAt: string): FeatureFlagAuditEntryDto {
  const after: FlagSnapshot = { ...BEFORE, value: action === FlagAction.VALUE_SET };
  return {
    id,
    flagId: FLAG_ID,
    flagKey: FLAG_EXAMPLE.key,
    actorType,
    actorId: actorType === 'system' ? null : API_KEY_ID,
    action,
    before,
    after,
    createdAt,
  };
}

export const AUDIT_PAGE_EXAMPLE: AuditPageDto = {
  results: [
    auditEntry('e3b1c2d4-8f7a-4c6e-9d15-2a4b6c8d0e1f', FlagAction.VALUE_SET, 'system', BEFORE, '2026-11-27T18:00:00.412Z'),
    auditEntry('9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d', FlagAction.CREATE, 'apiKey', null, '2026-11-23T10:00:00.000Z'),
  ],
  total: 2,
  page: 1,
  totalPages: 1,
};

export const SCHEDULE_EXAMPLE: FlagScheduleDto = {
  id: '4f2a6c8e-0b1d-4e3f-a5b7-c9d1e3f5a7b9',
  flagId: FLAG_ID,
  at: '2026-12-04T18:00:00.000Z',
  change: { value: true, type: 'boolean' },
  state: 'pending',
  reason: null,
  createdAt: '2026-11-27T09:12:44.000Z',
  settledAt: null,
};

export const SCHEDULE_PAGE_EXAMPLE: FlagSchedulePageDto = {
  results: [
    SCHEDULE_EXAMPLE,
    {
      id: '8c0e2a4c-6e8a-4c0e-b2d4-f6a8c0e2a4c6',
      flagId: FLAG_ID,
      at: '2026-12-07T06:00:00.000Z',
      change: { value: false, type: 'boolean' },
      state: 'pending',
      reason: null,
      createdAt: '2026-11-27T09:13:02.000Z',
      settledAt: null,
    },
  ],
  total: 2,
  page: 1,
  totalPages: 1,
};

/** An export: two flags of a staging organization, by key. */
export const FLAG_EXPORT_EXAMPLE = {
  flags: [
    { key: 'double-xp', name: 'Double XP', description: null, type: 'boolean', value: true, runtime: 'shared', archived: false },
    {
      key: 'loot-table',
      name: 'Loot table',
      description: 'Drop rates by rarity',
      type: 'json',
      value: { common: 0.7, rare: 0.25, legendary: 0.05 },
      runtime: 'server',
      archived: false,
    },
  ],
};

export const IMPORT_REPORT_EXAMPLE = {
  created: ['loot-table'],
  updated: [
    {
      key: 'double-xp',
      before: { name: 'Double XP', description: null, type: 'boolean', value: false, runtime: 'shared', archived: false },
      after: { name: 'Double XP', description: null, type: 'boolean', value: true, runtime: 'shared', archived: false },
    },
  ],
  unchanged: [],
  refused: [],
};

export const IMPORT_REFUSED_EXAMPLE = {
  statusCode: 409,
  error: 'IMPORT_REFUSED',
  message: 'This organization refuses 1 of the flags (see refused); nothing was imported',
  created: ['double-xp'],
  updated: [],
  unchanged: [],
  refused: [
    {
      key: 'loot-table',
      reason: 'Flag allowance reached: this organization may have 5 flags at its subscription level; subscribe or delete a flag to create another',
    },
  ],
};

/** POST /v1/flags/import with requestReview: the change request made of the import (ChangeRequestDto, by name: it sits above flags). */
export const IMPORT_REVIEW_EXAMPLE = {
  id: '5f1e2d3c-4b5a-4697-8877-665544332211',
  title: 'Import of 1 flag',
  description: null,
  state: 'open',
  author: { type: 'session', id: '0b3c5a8e-2f1d-4c6b-9e7a-1d2c3b4a5f60', name: 'Ada Producer' },
  changes: [
    {
      key: 'xp-multiplier',
      flagId: null,
      before: null,
      after: { name: 'XP multiplier', description: null, type: 'number', value: 2, runtime: 'shared', archived: false },
      version: null,
    },
  ],
  reviews: [],
  approvalsNeeded: 1,
  applyAt: null,
  createdAt: '2026-12-04T15:55:00.000Z',
  updatedAt: '2026-12-04T15:55:00.000Z',
  appliedAt: null,
  override: null,
  failureReason: null,
  importReport: { created: ['xp-multiplier'], updated: [], unchanged: [], refused: [] },
  timeline: [
    { kind: 'opened', actor: { type: 'session', id: '0b3c5a8e-2f1d-4c6b-9e7a-1d2c3b4a5f60', name: 'Ada Producer' }, at: '2026-12-04T15:55:00.000Z' },
  ],
};
