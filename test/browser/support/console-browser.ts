import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser } from 'playwright-core';
import { CONSOLE_DIR } from '../../../src/console/console-assets';
import { launchChromium } from './chromium';
import { ConsolePage, Theme } from './console-page';

/**
 * Chromium for a suite of console pages: launched once the console is known to be built, and keeping each page a
 * test opens, so that the suite's afterEach closes them and fails the test on any page error or Content-Security-Policy
 * report (`expect(await chromium.closePages()).toEqual([])`). Close it before the apps in afterAll: its pages' event
 * streams would hold an app's shutdown.
 */
export class ConsoleBrowser {
  private readonly opened: ConsolePage[] = [];

  private constructor(readonly browser: Browser) {}

  /** Fails at once, saying what to run, when the console is not built (`npm run build`). */
  static async launch(): Promise<ConsoleBrowser> {
    if (!existsSync(join(CONSOLE_DIR, 'index.html'))) {
      throw new Error(`The console is not built (${CONSOLE_DIR}): run \`npm run build\` before \`npm run test:browser\`.`);
    }
    return new ConsoleBrowser(await launchChromium());
  }

  /** The console of the service at `origin` (its `path`, /console by default) in a fresh context: one person's browser. */
  async open(origin: string, options: { theme?: Theme; path?: string } = {}): Promise<ConsolePage> {
    const page = await ConsolePage.open(this.browser, origin, options);
    this.opened.push(page);
    return page;
  }

  /** Closes every page opened since the last call, and answers the problems they saw (none, for a passing test). */
  async closePages(): Promise<string[]> {
    const pages = this.opened.splice(0);
    const problems = pages.flatMap((page) => page.problems());
    await Promise.all(pages.map((page) => page.close()));
    return problems;
  }

  async close(): Promise<void> {
    await this.closePages();
    await this.browser.close();
  }
}
