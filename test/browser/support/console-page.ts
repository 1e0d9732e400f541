import { mkdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';

/** Where the screenshots of every page go, in light and dark: a test artifact, never in git (.gitignore). */
export const SCREENSHOTS = resolve(__dirname, '..', '..', '..', 'artifacts', 'console');

const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');

export type Theme = 'light' | 'dark';

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}

/**
 * The console in a fresh browser context (its own cookies and storage), as one person sees it. Keeps what the
 * browser printed: any page error or Content-Security-Policy report fails the test that opened it (see problems()).
 */
export class ConsolePage {
  private readonly log: string[] = [];

  private constructor(
    readonly origin: string,
    readonly context: BrowserContext,
    readonly page: Page,
  ) {
    page.on('console', (message) => {
      // Chromium logs every error status it fetched (the 401 of the session check before sign-in, a 409 the page shows):
      // those are answers the page handles, not faults.
      if (/^Failed to load resource: the server responded with a status of \d+/.test(message.text())) return;
      // Only the console's own pages: another site the browser passes through (an OpenID provider) is not under test.
      if (!page.url().startsWith(origin)) return;
      if (message.type() === 'error' || /Content Security Policy/i.test(message.text()))
        this.log.push(`[console.${message.type()}] ${message.text()}`);
    });
    page.on('pageerror', (error) => this.log.push(`[pageerror] ${error.message}`));
  }

  static async open(browser: Browser, origin: string, options: { theme?: Theme; path?: string } = {}): Promise<ConsolePage> {
    const context = await browser.newContext({ colorScheme: options.theme ?? 'light', viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    const opened = new ConsolePage(origin, context, page);
    await page.goto(`${origin}${options.path ?? '/console'}`);
    return opened;
  }

  /** Signs in through the form, as a person does. */
  async signIn(email: string, password: string): Promise<void> {
    await this.page.getByRole('heading', { name: 'Sign in to Flagstore' }).waitFor();
    await this.page.getByLabel('Email').fill(email);
    await this.page.getByLabel('Password').fill(password);
    await this.page.getByRole('button', { name: 'Sign in', exact: true }).click();
  }

  /** axe-core's serious and critical violations of the page as it is (run through DevTools, so the CSP stays on). */
  async accessibilityViolations(): Promise<AxeViolation[]> {
    // Through DevTools (addScriptTag would be an inline script, which the CSP refuses, as it should).
    await this.page.evaluate(`${AXE_SOURCE};0`);
    const violations = await this.page.evaluate(async () => {
      const axe = (globalThis as any).axe;
      const result = await axe.run((globalThis as any).document, { resultTypes: ['violations'] });
      return result.violations.map((violation: any) => ({
        id: violation.id,
        impact: violation.impact,
        help: violation.help,
        nodes: violation.nodes.map((node: any) => ({ target: node.target })),
      }));
    });
    return (violations as AxeViolation[]).filter((violation) => violation.impact === 'serious' || violation.impact === 'critical');
  }

  /** A full-page screenshot named `<name>-<theme>.png` in artifacts/console. */
  async screenshot(name: string, theme: Theme): Promise<string> {
    mkdirSync(SCREENSHOTS, { recursive: true });
    const path = join(SCREENSHOTS, `${name}-${theme}.png`);
    await this.page.screenshot({ path, fullPage: true });
    return path;
  }

  /** Page errors and CSP reports seen so far. */
  problems(): string[] {
    return [...this.log];
  }

  close(): Promise<void> {
    return this.context.close();
  }
}
