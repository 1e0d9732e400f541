import request from 'supertest';
import { TestApp } from '../support/test-app';
import { bearer } from './organizations.factory';

export interface FlagInput {
  key: string;
  name?: string;
  description?: string | null;
  type?: 'boolean' | 'string' | 'number' | 'json';
  value?: unknown;
  runtime?: 'shared' | 'server';
}

export function flagBody(input: FlagInput) {
  return {
    name: `Flag ${input.key}`,
    type: 'boolean',
    value: true,
    ...input,
  };
}

/** Creates a flag through the API with an API key and returns the created flag (expects 201). */
export async function createFlag(t: TestApp, apiKey: string, input: FlagInput) {
  const response = await request(t.http).post('/v1/flags').set(bearer(apiKey)).send(flagBody(input)).expect(201);
  return response.body as { id: string; key: string; locked: boolean; archived: boolean; value: unknown; updatedAt: string };
}

/**
 * What proves a flag row and its history were not written: the row version (xmin changes with every UPDATE,
 * even one that writes the same values), updated_at to the microsecond, and the number of audit entries.
 */
export async function storedFlagVersion(t: TestApp, flagId: string) {
  const { rows } = await t.db.query(
    `SELECT xmin::text AS version, updated_at::text AS "updatedAt",
            (SELECT count(*)::int FROM flag_audit_entries WHERE flag_id = flags.id) AS "auditEntries"
       FROM flags WHERE id = $1`,
    [flagId],
  );
  return rows[0] as { version: string; updatedAt: string; auditEntries: number };
}

export function api(t: TestApp, key: string) {
  const auth = bearer(key);
  return {
    get: (path: string) => request(t.http).get(`/v1${path}`).set(auth),
    post: (path: string) => request(t.http).post(`/v1${path}`).set(auth),
    patch: (path: string) => request(t.http).patch(`/v1${path}`).set(auth),
    delete: (path: string) => request(t.http).delete(`/v1${path}`).set(auth),
  };
}
