import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import request from 'supertest';
import { createTestApp, TestApp } from '../support/test-app';

const INDEX = '<!doctype html><html><head><script type="module" src="/console/assets/index-AbCd1234.js"></script></head><body></body></html>';
const SCRIPT = 'console.log("console");';

/** How the service serves its console (decisions.md, "Console"): on a built tree of its own, not the real build. */
describe('serving the console', () => {
  let t: TestApp;
  let dir: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'flagstore-console-'));
    mkdirSync(join(dir, 'assets'));
    writeFileSync(join(dir, 'index.html'), INDEX);
    writeFileSync(join(dir, 'assets', 'index-AbCd1234.js'), SCRIPT);
    writeFileSync(join(dir, 'assets', 'index-Zz99Yy88.css'), 'body{}');
    writeFileSync(join(dir, 'secret.txt'), 'not an asset');
    t = await createTestApp({ CDN_URL: 'https://cdn.example.com' }, { consoleDir: dir });
  });
  afterAll(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const expectPage = (response: request.Response) => {
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(response.headers['cache-control']).toBe('no-store');
    expect(response.text).toBe(INDEX);
    const csp = response.headers['content-security-policy'];
    const directives = Object.fromEntries(csp.split('; ').map((directive: string) => [directive.split(' ')[0], directive]));
    expect(directives['script-src']).toBe("script-src 'self'");
    expect(directives['style-src']).toBe("style-src 'self'");
    expect(directives['default-src']).toBe("default-src 'none'");
    expect(directives['frame-ancestors']).toBe("frame-ancestors 'none'");
    expect(directives['img-src']).toContain('https://cdn.example.com');
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval/);
  };

  it('redirects / to /console', async () => {
    const response = await request(t.http).get('/').expect(302);
    expect(response.headers.location).toBe('/console');
  });

  it('answers /console and every deep link below it with the app, never cached, with a strict CSP', async () => {
    for (const path of [
      '/console',
      '/console/',
      '/console/flags/0b6f3f8e-3c1e-4b43-9d0a-2f4f8e1f6a11',
      '/console/invitations/abc?x=1',
      '/console/sign-in',
    ]) {
      expectPage(await request(t.http).get(path));
    }
    const head = await request(t.http).head('/console/flags');
    expect(head.status).toBe(200);
    expect(head.headers['cache-control']).toBe('no-store');
  });

  it('serves hashed assets for a year, immutable, with their type', async () => {
    const script = await request(t.http).get('/console/assets/index-AbCd1234.js').expect(200);
    expect(script.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(script.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(script.text).toBe(SCRIPT);
    const style = await request(t.http).get('/console/assets/index-Zz99Yy88.css').expect(200);
    expect(style.headers['content-type']).toBe('text/css; charset=utf-8');
  });

  it('answers 404 for a hashed asset that is not there, and never serves a file that is not an asset', async () => {
    const missing = await request(t.http).get('/console/assets/index-Gone0000.js').expect(404);
    expect(missing.headers['cache-control']).toBe('no-store');
    // Not an asset name: the app's page, whatever file the path names.
    expectPage(await request(t.http).get('/console/secret.txt'));
    expectPage(await request(t.http).get('/console/assets/../secret.txt'));
    expectPage(await request(t.http).get('/console/%2e%2e/%2e%2e/package.json'));
  });

  it("never shadows the API's, the upload host's, the CDN's or OFREP's routes", async () => {
    expect((await request(t.http).get('/v1/flags')).status).toBe(401);
    expect((await request(t.http).get('/consoles')).status).toBe(404);
    expect((await request(t.http).post('/console').send({})).status).toBe(404);
    expect((await request(t.http).get('/c/0b6f3f8e-3c1e-4b43-9d0a-2f4f8e1f6a11/x')).status).not.toBe(200);
    expect((await request(t.http).post('/ofrep/v1/evaluate/flags').send({ context: {} })).status).toBe(401);
    expect((await request(t.http).get('/health/live')).status).toBe(200);
  });

  it('says how to build it when no console is built', async () => {
    const bare = await createTestApp({}, { consoleDir: join(dir, 'none') });
    try {
      const response = await request(bare.http).get('/console').expect(503);
      expect(response.text).toMatch(/npm run build/);
    } finally {
      await bare.close();
    }
  });
});
