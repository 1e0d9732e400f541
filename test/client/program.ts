/**
 * A studio's internal tool, written against nothing but Flagstore's OpenAPI document: the types come from
 * `openapi-typescript` (generated into ./generated, never committed) and the calls go through `openapi-fetch`.
 * It sets up the flags a game needs, checks what game servers will poll, reads the audit trail, and uploads
 * two files. It returns what it saw so that a test can hold the service to it.
 */
import createClient from 'openapi-fetch';
import type { components, paths } from './generated/flagstore';

type Schemas = components['schemas'];
export type FeatureFlag = Schemas['FeatureFlagDto'];
export type NewFlag = Schemas['CreateFlagDto'];
export type FlagEdit = Schemas['UpdateFlagDto'];
export type FlagQuota = Schemas['FeatureFlagQuotaDto'];
export type ConfigEntry = Schemas['FlagConfigEntryDto'];
export type AuditEntry = Schemas['FeatureFlagAuditEntryDto'];
export type FlagSnapshot = Schemas['FlagSnapshotDto'];
export type StorageItem = Schemas['StorageItemDto'];
export type StorageStats = Schemas['StorageStatsDto'];
export type UploadedItem = Schemas['UploadedItemDto'];
export type FlagValue = FeatureFlag['value'];

/** What the team's code relies on from the contract; checked wherever this file is type-checked. */
type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };
type Holds<T extends true> = T;
export type ContractAssumptions = [
  // Any JSON value can be sent as a json flag's value, on create and on update.
  Holds<JsonValue extends NewFlag['value'] ? true : false>,
  Holds<JsonValue extends FlagEdit['value'] ? true : false>,
  // A value read back may be anything JSON, so it has to be narrowed before use.
  Holds<null extends FlagValue ? true : false>,
  // Creations have no `before`, deletions no `after`; a deleted flag's entries have no flagId.
  Holds<null extends AuditEntry['before'] ? true : false>,
  Holds<null extends AuditEntry['after'] ? true : false>,
  Holds<null extends AuditEntry['flagId'] ? true : false>,
  Holds<null extends FeatureFlag['description'] ? true : false>,
  Holds<null extends FlagSnapshot['description'] ? true : false>,
];

export interface ClientProgramOptions {
  /** Where Flagstore is served (the document's `servers` entry): the paths carry `/v1` themselves. */
  baseUrl: string;
  apiKey: string;
}

export interface FlagRun {
  key: string;
  type: FeatureFlag['type'];
  id: string;
  createdStatus: number;
  created: FeatureFlag;
  readStatus: number;
  read: FeatureFlag;
  patchedStatus: number;
  patched: FeatureFlag;
}

export interface UploadRun {
  signedUrlStatus: number;
  url: string;
  mediaId: string | null;
  mediaUrl: string | null;
  uploadStatus: number;
  uploaded: UploadedItem;
}

export interface ClientProgramResult {
  flags: FlagRun[];
  list: { status: number; total: number; keys: string[]; quota: FlagQuota; room: number };
  config: {
    status: number;
    etagHeader: string;
    cacheControl: string | null;
    etag: string;
    pollIntervalSeconds: number;
    entries: ConfigEntry[];
    /** What a server may relay to players' clients: `shared` flags only. */
    relayable: string[];
    notModifiedStatus: number;
  };
  audit: { status: number; total: number; entries: AuditEntry[]; changes: string[] };
  storage: {
    preallocated: UploadRun;
    form: UploadRun;
    items: { status: number; total: number; items: StorageItem[] };
    stats: { status: number; stats: StorageStats };
    download: { status: number; sameBytes: boolean };
  };
}

/** The flags the game ships with, one of each type; `maintenance-mode` leaves runtime to its default. */
const GAME_FLAGS: NewFlag[] = [
  { key: 'maintenance-mode', name: 'Maintenance mode', type: 'boolean', value: false },
  { key: 'motd', name: 'MOTD', description: 'Shown on the title screen', type: 'string', value: 'Season 3 is live', runtime: 'shared' },
  { key: 'xp-multiplier', name: 'XP multiplier', type: 'number', value: 1.5, runtime: 'server' },
  {
    key: 'loot-table',
    name: 'Loot table',
    type: 'json',
    value: {
      drops: [
        { item: 'sword', weight: 2 },
        { item: 'shield', weight: 1 },
      ],
      rare: null,
    },
    runtime: 'server',
  },
];

/** The follow-up edit of each: a value, the details, a value, and a value together with the runtime. */
const EDITS: Record<string, FlagEdit> = {
  'maintenance-mode': { type: 'boolean', value: true },
  motd: { name: 'Message of the day', description: null },
  'xp-multiplier': { type: 'number', value: 2 },
  'loot-table': { type: 'json', value: ['sword', { item: 'crown', weight: 0.5 }], runtime: 'shared' },
};

export class FlagstoreCallFailed extends Error {
  constructor(what: string, status: number, body: unknown) {
    super(`${what} answered ${status}: ${JSON.stringify(body)}`);
  }
}

/** A value read back, in the form a game would log it. */
export function describeValue(type: FeatureFlag['type'], value: FlagValue): string {
  switch (type) {
    case 'boolean':
      if (typeof value !== 'boolean') throw new Error(`a boolean flag holds ${JSON.stringify(value)}`);
      return value ? 'on' : 'off';
    case 'number':
      if (typeof value !== 'number') throw new Error(`a number flag holds ${JSON.stringify(value)}`);
      return value.toFixed(2);
    case 'string':
      if (typeof value !== 'string') throw new Error(`a string flag holds ${JSON.stringify(value)}`);
      return value;
    case 'json':
      return canonicalJson(value);
  }
}

/** JSON with object keys sorted: the service stores values as PostgreSQL jsonb, which does not keep key order. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, member: unknown) =>
    typeof member === 'object' && member !== null && !Array.isArray(member)
      ? Object.fromEntries(Object.entries(member).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : member,
  );
}

/** One line of the audit trail, as the team's dashboard shows it. */
export function describeChange(entry: AuditEntry): string {
  const what = `${entry.action} ${entry.flagKey ?? '(deleted flag)'}`;
  if (entry.before === null && entry.after !== null) return `${what}: created as ${describeValue(entry.after.type, entry.after.value)}`;
  if (entry.after === null) return `${what}: removed`;
  if (entry.before === null) return what;
  const before = entry.before;
  const after = entry.after;
  const changes: string[] = [];
  if (before.runtime !== after.runtime) changes.push(`runtime ${before.runtime} -> ${after.runtime}`);
  if (before.type !== after.type || canonicalJson(before.value) !== canonicalJson(after.value)) {
    changes.push(`value ${describeValue(before.type, before.value)} -> ${describeValue(after.type, after.value)}`);
  }
  if (before.name !== after.name) changes.push(`name ${before.name} -> ${after.name}`);
  if (before.description !== after.description) changes.push(`description ${before.description ?? '(none)'} -> ${after.description ?? '(none)'}`);
  if (before.archived !== after.archived) changes.push(after.archived ? 'archived' : 'restored');
  return `${what}: ${changes.join(', ')}`;
}

/** Uploads to a signed URL: plain fetch, since the URL the service handed out is used as it is. */
async function upload(what: string, url: string, init: RequestInit): Promise<{ status: number; item: UploadedItem }> {
  const response = await fetch(url, init);
  if (!response.ok) throw new FlagstoreCallFailed(what, response.status, await response.text());
  const item: unknown = await response.json();
  if (!isUploadedItem(item)) throw new Error(`${what} answered ${response.status} with ${JSON.stringify(item)}, not an uploaded item`);
  return { status: response.status, item };
}

/** fetch() knows nothing of the document: the upload's answer is checked against UploadedItemDto's shape. */
function isUploadedItem(body: unknown): body is UploadedItem {
  return (
    typeof body === 'object' &&
    body !== null &&
    'id' in body &&
    typeof body.id === 'string' &&
    'kind' in body &&
    (body.kind === 'image' || body.kind === 'video' || body.kind === 'audio' || body.kind === 'document') &&
    'size' in body &&
    typeof body.size === 'number' &&
    'state' in body &&
    (body.state === 'pending' || body.state === 'complete') &&
    'metadata' in body &&
    typeof body.metadata === 'object' &&
    'createdAt' in body &&
    typeof body.createdAt === 'string' &&
    'mediaUrl' in body &&
    typeof body.mediaUrl === 'string'
  );
}

export async function runClientProgram({ baseUrl, apiKey }: ClientProgramOptions): Promise<ClientProgramResult> {
  const client = createClient<paths>({ baseUrl, headers: { Authorization: `Bearer ${apiKey}` } });

  // Flags: create each, read it back, then edit it.
  const flags: FlagRun[] = [];
  for (const flag of GAME_FLAGS) {
    const create = await client.POST('/v1/flags', { body: flag });
    if (!create.data) throw new FlagstoreCallFailed(`POST /v1/flags ${flag.key}`, create.response.status, create.error);
    const id = create.data.id;

    const read = await client.GET('/v1/flags/{flagId}', { params: { path: { flagId: id } } });
    if (!read.data) throw new FlagstoreCallFailed(`GET /v1/flags/${id}`, read.response.status, read.error);

    const edit = EDITS[flag.key];
    if (!edit) throw new Error(`no edit planned for ${flag.key}`);
    const patch = await client.PATCH('/v1/flags/{flagId}', { params: { path: { flagId: id } }, body: edit });
    if (!patch.data) throw new FlagstoreCallFailed(`PATCH /v1/flags/${id}`, patch.response.status, patch.error);

    flags.push({
      key: create.data.key,
      type: create.data.type,
      id,
      createdStatus: create.response.status,
      created: create.data,
      readStatus: read.response.status,
      read: read.data,
      patchedStatus: patch.response.status,
      patched: patch.data,
    });
  }

  // The management list, with the allowance next to it.
  const list = await client.GET('/v1/flags', { params: { query: { page: 1, limit: 20 } } });
  if (!list.data) throw new FlagstoreCallFailed('GET /v1/flags', list.response.status, list.error);
  const { quota } = list.data;

  // What game servers poll: a full payload, then a revalidation with the ETag it came with.
  const config = await client.GET('/v1/flags/config');
  if (!config.data) throw new FlagstoreCallFailed('GET /v1/flags/config', config.response.status, config.error);
  const etagHeader = config.response.headers.get('ETag');
  if (!etagHeader) throw new Error('GET /v1/flags/config answered without an ETag');
  const revalidation = await client.GET('/v1/flags/config', { params: { header: { 'If-None-Match': etagHeader } } });
  if (revalidation.response.status !== 304) {
    throw new FlagstoreCallFailed('GET /v1/flags/config with If-None-Match', revalidation.response.status, revalidation.error ?? revalidation.data);
  }

  // The audit trail, newest first.
  const audit = await client.GET('/v1/flags/audit', { params: { query: { limit: 50 } } });
  if (!audit.data) throw new FlagstoreCallFailed('GET /v1/flags/audit', audit.response.status, audit.error);

  // Storage: a screenshot through a pre-allocated URL, a save file through a form upload.
  const screenshot = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
  const signed = await client.GET('/v1/storage/signed-url', {
    params: { query: { contentType: 'image/png', size: screenshot.length, metadata: JSON.stringify({ level: 3, author: 'mira', public: true }) } },
  });
  if (!signed.data) throw new FlagstoreCallFailed('GET /v1/storage/signed-url (pre-allocated)', signed.response.status, signed.error);
  // The signed URL is its own authorisation: no bearer header.
  const put = await upload('PUT to the pre-allocated URL', signed.data.url, {
    method: 'PUT',
    headers: { 'Content-Type': 'image/png' },
    body: screenshot,
  });

  const saveFile = Buffer.from(JSON.stringify({ slot: 1, checkpoint: 'harbour' }));
  const formUrl = await client.GET('/v1/storage/signed-url');
  if (!formUrl.data) throw new FlagstoreCallFailed('GET /v1/storage/signed-url (form upload)', formUrl.response.status, formUrl.error);
  const form = new FormData();
  form.append('metadata', JSON.stringify({ slot: 1 }));
  form.append('file', new Blob([saveFile], { type: 'application/json' }), 'save-1.json');
  const post = await upload('POST to the form upload URL', formUrl.data.url, { method: 'POST', body: form });

  const items = await client.GET('/v1/storage/items', { params: { query: { page: 1, limit: 10 } } });
  if (!items.data) throw new FlagstoreCallFailed('GET /v1/storage/items', items.response.status, items.error);
  const stats = await client.GET('/v1/storage');
  if (!stats.data) throw new FlagstoreCallFailed('GET /v1/storage', stats.response.status, stats.error);

  // Players fetch the screenshot from the CDN address the pre-allocated URL came with.
  const mediaUrl = signed.data.mediaUrl;
  if (!mediaUrl) throw new Error('a pre-allocated signed URL came without mediaUrl');
  const download = await fetch(mediaUrl);
  const downloaded = Buffer.from(await download.arrayBuffer());

  return {
    flags,
    list: {
      status: list.response.status,
      total: list.data.total,
      keys: list.data.results.map((flag) => flag.key),
      quota,
      room: quota.max - quota.used,
    },
    config: {
      status: config.response.status,
      etagHeader,
      cacheControl: config.response.headers.get('Cache-Control'),
      etag: config.data.etag,
      pollIntervalSeconds: config.data.pollIntervalSeconds,
      entries: config.data.flags,
      relayable: config.data.flags.filter((entry) => entry.runtime === 'shared').map((entry) => entry.key),
      notModifiedStatus: revalidation.response.status,
    },
    audit: {
      status: audit.response.status,
      total: audit.data.total,
      entries: audit.data.results,
      changes: audit.data.results.map(describeChange),
    },
    storage: {
      preallocated: {
        signedUrlStatus: signed.response.status,
        url: signed.data.url,
        mediaId: signed.data.mediaId ?? null,
        mediaUrl,
        uploadStatus: put.status,
        uploaded: put.item,
      },
      form: {
        signedUrlStatus: formUrl.response.status,
        url: formUrl.data.url,
        mediaId: formUrl.data.mediaId ?? null,
        mediaUrl: formUrl.data.mediaUrl ?? null,
        uploadStatus: post.status,
        uploaded: post.item,
      },
      items: { status: items.response.status, total: items.data.total, items: items.data.items },
      stats: { status: stats.response.status, stats: stats.data },
      download: { status: download.status, sameBytes: downloaded.equals(screenshot) },
    },
  };
}
