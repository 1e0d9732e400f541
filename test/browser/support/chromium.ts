import { accessSync, constants } from 'node:fs';
import { Browser, chromium } from 'playwright-core';

/**
 * Flags for a machine with no outside network: without the background-networking ones Chromium keeps trying
 * to reach Google's services (component updates, sync, variations) and logs every refused connection.
 */
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Where Debian's `chromium` package puts its launcher; CHROMIUM_PATH overrides it. No browser is ever downloaded. */
export function chromiumPath(): string {
  return process.env.CHROMIUM_PATH || '/usr/bin/chromium';
}

/** Launches the machine's Chromium, headless. Missing: a failure that says how to install it. */
export async function launchChromium(): Promise<Browser> {
  const executablePath = chromiumPath();
  try {
    accessSync(executablePath, constants.X_OK);
  } catch {
    const where = process.env.CHROMIUM_PATH ? `CHROMIUM_PATH=${executablePath}` : executablePath;
    throw new Error(
      process.env.CI === 'true'
        ? `CI=true and Chromium is missing (${where} is not an executable): the browser tests must run in CI; ` +
            "install Debian's package (apt-get install chromium) in the CI image, or set CHROMIUM_PATH."
        : `The browser tests need Chromium, and ${where} is not an executable. Install Debian's package ` +
            '(apt-get install chromium) or set CHROMIUM_PATH to a Chromium binary. (npm test does not run this suite.)',
    );
  }
  return chromium.launch({ executablePath, args: CHROMIUM_ARGS, headless: true, timeout: 30_000 });
}

/**
 * Closes each of a suite's resources independently (the browser, page servers, apps): a failing or slow close
 * must not leave the others running. The first failure is thrown once all have been tried.
 */
export async function closeEach(...resources: Array<{ close(): Promise<unknown> } | undefined>): Promise<void> {
  const closed = await Promise.allSettled(resources.map((resource) => resource?.close()));
  const failure = closed.find((result): result is PromiseRejectedResult => result.status === 'rejected');
  if (failure) throw failure.reason;
}
