import request from 'supertest';
import { Permission } from '../../src/auth/permission';
import { TEST_ADMIN_TOKEN, TestApp } from '../support/test-app';

export const ALL_PERMISSIONS = Object.values(Permission);

export interface TestOrganization {
  id: string;
  /** An API key with every permission. */
  key: string;
  keyId: string;
}

export function admin(testApp: TestApp) {
  const auth = { Authorization: `Bearer ${TEST_ADMIN_TOKEN}` };
  return {
    get: (path: string) => request(testApp.http).get(`/v1/admin${path}`).set(auth),
    post: (path: string) => request(testApp.http).post(`/v1/admin${path}`).set(auth),
    patch: (path: string) => request(testApp.http).patch(`/v1/admin${path}`).set(auth),
    delete: (path: string) => request(testApp.http).delete(`/v1/admin${path}`).set(auth),
  };
}

export async function createApiKey(testApp: TestApp, organizationId: string, permissions: Permission[]) {
  const response = await admin(testApp)
    .post(`/organizations/${organizationId}/api-keys`)
    .send({ name: `key-${permissions.join('-').toLowerCase() || 'none'}`, permissions })
    .expect(201);
  return response.body as { id: string; key: string; permissions: Permission[] };
}

/** A fresh organization with a key that may do everything. */
export async function createOrganization(testApp: TestApp, name = 'Test Studio'): Promise<TestOrganization> {
  const organization = await admin(testApp).post('/organizations').send({ name }).expect(201);
  const key = await createApiKey(testApp, organization.body.id, ALL_PERMISSIONS);
  return { id: organization.body.id, key: key.key, keyId: key.id };
}

export async function subscribe(testApp: TestApp, organizationId: string, plan = 'pro'): Promise<string> {
  const response = await admin(testApp).post(`/organizations/${organizationId}/subscriptions`).send({ plan }).expect(201);
  return response.body.id as string;
}

export function bearer(key: string) {
  return { Authorization: `Bearer ${key}` };
}
