import { errors } from 'playwright-core';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import type { PageServer } from './page-server';

/** What page.js's request() answers: what JavaScript could read, or how the browser refused the fetch. */
export type PageResponse =
  | { status: number; headers: Record<string, string>; body: any; rejected?: undefined }
  | { rejected: { name: string; message: string }; status?: undefined };

export type PageBody =
  { json: unknown } | { bytes: string; type: string } | { form: { file: { bytes: string; type: string; name: string }; metadata?: string } };

export interface PageRequest {
  method?: string;
  headers?: Record<string, string>;
  body?: PageBody;
  cache?: 'default' | 'no-store' | 'reload' | 'no-cache';
}

export type PixelResult =
  { width: number; height: number; pixel: number[] } | { loadFailed: string } | { readFailed: { name: string; message: string } };

/** A request the page sent, as the browser saw it (Playwright's resource types: 'fetch', 'eventsource', ...). */
export interface SentRequest {
  method: string;
  url: string;
  resourceType: string;
}

/**
 * A test page open in a fresh browser context (its own cache and storage), on one of the page servers' origins:
 * index.html unless told otherwise (every page loads page.js). Keeps what the browser printed (console and page
 * errors) and the requests that failed: Chromium explains every CORS refusal there, and the failure messages
 * quote it.
 */
export class BrowserPage {
  private readonly log: string[] = [];
  private readonly sent: SentRequest[] = [];

  private constructor(
    readonly origin: string,
    private readonly context: BrowserContext,
    private readonly page: Page,
  ) {
    page.on('console', (message) => this.log.push(`[console.${message.type()}] ${message.text()}`));
    page.on('pageerror', (error) => this.log.push(`[pageerror] ${error.message}`));
    page.on('request', (request) => this.sent.push({ method: request.method(), url: request.url(), resourceType: request.resourceType() }));
    page.on('requestfailed', (request) => this.log.push(`[requestfailed] ${request.method()} ${request.url()}: ${request.failure()?.errorText}`));
  }

  static async open(browser: Browser, server: PageServer, path = '/'): Promise<BrowserPage> {
    const context = await browser.newContext();
    const page = await context.newPage();
    const opened = new BrowserPage(server.origin, context, page);
    const response = await page.goto(`${server.origin}${path}`);
    if (response?.status() !== 200) {
      const body = await response?.text().catch(() => '');
      await context.close();
      throw new Error(`the test page ${server.origin}${path} answered ${response?.status()}: ${body}`);
    }
    if (!(await page.evaluate(() => typeof (globalThis as any).flagstore === 'object'))) {
      await context.close();
      throw new Error(`page.js did not load on ${server.origin}:\n${opened.browserLog()}`);
    }
    return opened;
  }

  /** fetch() run by the page's own script; `body.bytes` is base64. */
  request(url: string, init: PageRequest = {}): Promise<PageResponse> {
    return this.page.evaluate(([u, i]) => (globalThis as any).flagstore.request(u, i), [url, init] as const);
  }

  /** Draws url on a canvas and reads one pixel back (see page.js). `crossOrigin: null` leaves the attribute off. */
  readPixel(url: string, options: { crossOrigin?: 'anonymous' | null; x?: number; y?: number } = {}): Promise<PixelResult> {
    return this.page.evaluate(([u, o]) => (globalThis as any).flagstore.readPixel(u, o), [url, options] as const);
  }

  /** Runs fn(arg) in the page: fn is serialised, so it sees the page's globals and nothing of the test's. */
  evaluate<R, A>(fn: (arg: A) => R | Promise<R>, arg: A): Promise<R> {
    return this.page.evaluate(fn as (arg: unknown) => R | Promise<R>, arg);
  }

  /** Whether fn(arg) turned truthy in the page within timeoutMs (checked every 20 ms). */
  async becomes<A>(fn: (arg: A) => unknown, arg: A, timeoutMs: number): Promise<boolean> {
    try {
      await this.page.waitForFunction(fn as (arg: unknown) => unknown, arg, { timeout: timeoutMs, polling: 20 });
      return true;
    } catch (error) {
      if (error instanceof errors.TimeoutError) return false;
      throw error;
    }
  }

  /** Every request the page sent so far, in order (fetches, event streams, modules). */
  sentRequests(): SentRequest[] {
    return [...this.sent];
  }

  /** Everything the browser printed so far, one line each. */
  browserLog(): string {
    return this.log.length ? this.log.join('\n') : '(nothing)';
  }

  close(): Promise<void> {
    return this.context.close();
  }
}

/**
 * The answer JS read, or a failure saying the browser refused it (with the browser's own explanation):
 * the assertion for every call that must work cross-origin.
 */
export function readable(page: BrowserPage, what: string, response: PageResponse): Extract<PageResponse, { status: number }> {
  if (response.rejected) {
    throw new Error(
      `${what}: the browser refused the answer to the page on ${page.origin} ` +
        `(${response.rejected.name}: ${response.rejected.message}); a missing or wrong CORS header?\n` +
        `Browser log:\n${page.browserLog()}`,
    );
  }
  return response as Extract<PageResponse, { status: number }>;
}

/** The assertion for calls that must stay unreadable cross-origin: fetch rejects with a TypeError. */
export function expectRefused(page: BrowserPage, what: string, response: PageResponse): void {
  if (!response.rejected) {
    throw new Error(
      `${what}: expected the browser to refuse the answer to the page on ${page.origin} (fetch rejecting with a ` +
        `TypeError), but JavaScript read status ${response.status} with headers ${JSON.stringify(response.headers)} ` +
        `and body ${JSON.stringify(response.body)}`,
    );
  }
  expect(response.rejected.name).toBe('TypeError');
}

/** The pixel read back, or a failure explaining why the canvas could not be read. */
export function pixelOf(page: BrowserPage, what: string, result: PixelResult): { width: number; height: number; pixel: number[] } {
  if ('loadFailed' in result) {
    throw new Error(`${what}: ${result.loadFailed}; the server must answer Access-Control-Allow-Origin.\nBrowser log:\n${page.browserLog()}`);
  }
  if ('readFailed' in result) {
    throw new Error(`${what}: the canvas was tainted, getImageData threw ${result.readFailed.name}: ${result.readFailed.message}`);
  }
  return result;
}
