import request from 'supertest';
import { createOrganization } from '../factories/organizations.factory';
import { addMember, createUser, PASSWORD } from '../factories/people.factory';
import { freePort } from '../../src/common/free-port';
import { createTestApp, TestApp } from '../support/test-app';

/**
 * decisions.md, "Trust", "Who can learn what": the single sign-on result pages and /docs are served with a strict CSP
 * of their own and `X-Content-Type-Options: nosniff`; PUBLIC_URL is parsed once, and the session cookie's `Secure`
 * follows its scheme whatever its case. (That /docs still renders under its CSP: test/browser/docs.browser-spec.ts.)
 */
describe('the headers of the pages the service writes, and the cookie under an https PUBLIC_URL', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
  });
  afterAll(() => t?.close());

  it.each(['/docs', '/docs/', '/docs/swagger-ui-init.js', '/docs/swagger-ui.css'])('serves %s with its CSP and nosniff', async (path) => {
    const answer = await request(t.http).get(path).expect(200);
    expect(answer.headers['x-content-type-options']).toBe('nosniff');
    const csp: string = answer.headers['content-security-policy'];
    expect(csp).toMatch(/^default-src 'none'; script-src 'self'; style-src 'self'( 'sha256-[A-Za-z0-9+/]+=')+ 'unsafe-hashes' 'sha256-/);
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval/);
  });

  it('answers /docs with the page Swagger UI writes, its inline styles allowed by hash only', async () => {
    const page = await request(t.http).get('/docs').expect(200);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.text).toMatch(/swagger-ui-init\.js/);
    expect(page.text).not.toMatch(/<script>/); // no inline script: script-src 'self' covers every one
  });

  it.each(['/v1/auth/sso', '/v1/auth/sso/callback?code=x&state=y'])(
    'serves the single sign-on page of %s with a strict CSP and nosniff',
    async (path) => {
      const page = await request(t.http).get(path).expect(404);
      expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(page.text).toMatch(/You are not signed in/);
      expect(page.headers['content-security-policy']).toBe("default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'");
      expect(page.headers['x-content-type-options']).toBe('nosniff');
    },
  );

  describe('PUBLIC_URL=HTTPS://…', () => {
    let secure: TestApp;
    beforeAll(async () => {
      const port = await freePort();
      secure = await createTestApp({ PORT: String(port), PUBLIC_URL: `HTTPS://LOCALHOST:${port}/` }, { sameDatabaseAs: t });
    });
    afterAll(() => secure?.close());

    it('sets the session cookie Secure, and spells PUBLIC_URL as parsed', async () => {
      const org = await createOrganization(secure);
      const user = await createUser(secure);
      await addMember(secure, org.id, user.id, 'viewer');
      const login = await request(secure.http).post('/v1/auth/login').send({ email: user.email, password: PASSWORD }).expect(200);
      const cookie = ([] as string[]).concat(login.headers['set-cookie'] ?? []).find((value) => value.startsWith('flagstore_session='));
      expect(cookie?.split('; ')).toEqual(expect.arrayContaining(['HttpOnly', 'SameSite=Lax', 'Path=/', 'Secure']));
      expect(secure.config.urls.publicUrl).toMatch(/^https:\/\/localhost:\d+$/);
    });
  });
});
