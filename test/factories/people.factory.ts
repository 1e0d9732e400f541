import request from 'supertest';
import { TestApp } from '../support/test-app';
import { admin, createOrganization, TestOrganization } from './organizations.factory';

export type Role = 'viewer' | 'editor' | 'admin';

export const PASSWORD = 'correct horse battery staple';

/** A signed-in user: the cookie to send, the CSRF token of the session, and the body of sign-in. */
export interface SignedIn {
  userId: string;
  email: string;
  cookie: string;
  csrfToken: string;
  body: {
    user: { id: string; email: string; name: string; emailVerified?: boolean };
    organizations: { id: string; name: string; role: Role }[];
    csrfToken: string;
  };
}

let users = 0;

/** A new user with a unique email (and PASSWORD unless given). */
export async function createUser(t: TestApp, fields: { email?: string; name?: string; password?: string | null } = {}) {
  users += 1;
  const body = {
    email: fields.email ?? `person-${users}-${Date.now()}@studio.example`,
    name: fields.name ?? `Person ${users}`,
    ...(fields.password === null ? {} : { password: fields.password ?? PASSWORD }),
  };
  const response = await admin(t).post('/users').send(body).expect(201);
  return response.body as { id: string; email: string; name: string; createdAt: string; emailVerified: boolean };
}

export async function addMember(t: TestApp, organizationId: string, userId: string, role: Role): Promise<void> {
  await admin(t).post(`/organizations/${organizationId}/members`).send({ userId, role }).expect(201);
}

/** An organization "Acme Games <label>" with its admin, Maya, and an editor, Sam: the cast of the console's review journeys. */
export async function createTeam(t: TestApp, label: string) {
  const org: TestOrganization = await createOrganization(t, `Acme Games ${label}`);
  const maya = await createUser(t, { name: `Maya Admin ${label}` });
  const sam = await createUser(t, { name: `Sam Editor ${label}` });
  await addMember(t, org.id, maya.id, 'admin');
  await addMember(t, org.id, sam.id, 'editor');
  return { org, maya, sam };
}

/** The `flagstore_session=<token>` pair of a Set-Cookie answer, to send back as the Cookie header. */
export function sessionCookieOf(setCookie: string[] | string | undefined): string {
  const header = ([] as string[]).concat(setCookie ?? []).find((value) => value.startsWith('flagstore_session='));
  if (!header) throw new Error('No flagstore_session cookie was set');
  return header.split(';')[0];
}

export async function signIn(t: TestApp, email: string, password = PASSWORD): Promise<SignedIn> {
  const response = await request(t.http).post('/v1/auth/login').send({ email, password }).expect(200);
  return {
    userId: response.body.user.id,
    email,
    cookie: sessionCookieOf(response.headers['set-cookie']),
    csrfToken: response.body.csrfToken,
    body: response.body,
  };
}

/** A user who is a member of `organizationId` with `role`, signed in. */
export async function memberSignedIn(t: TestApp, organizationId: string, role: Role): Promise<SignedIn> {
  const user = await createUser(t);
  await addMember(t, organizationId, user.id, role);
  return signIn(t, user.email);
}

/**
 * Requests under /v1 as the signed-in user in `organizationId`: the cookie, X-Organization-Id, and X-CSRF-Token
 * (the browser's way; `csrf: false` leaves it out).
 */
export function asSession(t: TestApp, who: SignedIn, organizationId?: string, options: { csrf?: boolean } = {}) {
  const headers: Record<string, string> = { Cookie: who.cookie };
  if (organizationId !== undefined) headers['X-Organization-Id'] = organizationId;
  if (options.csrf !== false) headers['X-CSRF-Token'] = who.csrfToken;
  return {
    get: (path: string) => request(t.http).get(`/v1${path}`).set(headers),
    post: (path: string) => request(t.http).post(`/v1${path}`).set(headers),
    put: (path: string) => request(t.http).put(`/v1${path}`).set(headers),
    patch: (path: string) => request(t.http).patch(`/v1${path}`).set(headers),
    delete: (path: string) => request(t.http).delete(`/v1${path}`).set(headers),
  };
}
