import type { Browser } from 'playwright-core';
import { createTestApp, TestApp } from '../support/test-app';
import { closeEach, launchChromium } from './support/chromium';

/**
 * /docs under its own strict Content-Security-Policy (decisions.md, "Trust": "Who can learn what"), in a real browser:
 * Swagger UI still renders the service's operations, and Chromium refuses nothing on the page.
 */
describe('Swagger UI at /docs (headless Chromium)', () => {
  let browser: Browser;
  let t: TestApp;

  beforeAll(async () => {
    browser = await launchChromium();
    t = await createTestApp();
  });
  afterAll(() => closeEach(browser, t));

  it('renders the operations under its CSP, with nothing refused', async () => {
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      const refused: string[] = [];
      page.on('console', (message) => {
        if (/Content Security Policy|Refused to/i.test(message.text())) refused.push(message.text());
      });
      const answer = await page.goto(`${t.config.urls.publicUrl}/docs`);
      expect(answer?.status()).toBe(200);
      expect(await answer?.headerValue('content-security-policy')).toMatch(/^default-src 'none'; script-src 'self'; style-src 'self' 'sha256-/);
      expect(await answer?.headerValue('x-content-type-options')).toBe('nosniff');
      await page.locator('.swagger-ui .info .title').filter({ hasText: 'Flagstore' }).waitFor({ timeout: 15_000 });
      expect(await page.locator('.opblock').count()).toBeGreaterThan(20);
      // The page's own inline styles apply (allowed by their hashes): its symbol sheet is hidden, Swagger UI's CSS loaded.
      expect(await page.evaluate("getComputedStyle(document.querySelector('body > svg')).position")).toBe('absolute');
      expect(await page.evaluate('getComputedStyle(document.body).marginTop')).toBe('0px');
      // An operation opens (Swagger UI's scripts run).
      await page.locator('.opblock-summary').first().click();
      await page.locator('.opblock-body').first().waitFor({ timeout: 5_000 });
      expect(refused).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
