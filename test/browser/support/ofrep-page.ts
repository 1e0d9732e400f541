import type { Browser } from 'playwright-core';
import { BrowserPage, SentRequest } from './browser-page';
import type { PageServer } from './page-server';

/** OFREPWebProvider's options as ofrep.js takes them (it adds the ones that keep anything but the stream out). */
export interface OfrepStart {
  baseUrl: string;
  headers: Record<string, string>;
  /** Milliseconds; 0 (the provider's default) is no polling. */
  pollInterval: number;
}

export type FlagValueType = 'boolean' | 'string' | 'number' | 'object';

export interface FlagRead {
  key: string;
  type: FlagValueType;
  defaultValue: unknown;
}

/** The OpenFeature evaluation details the page's client answered. */
export interface FlagDetails {
  flagKey: string;
  value: unknown;
  reason?: string;
  variant?: string;
  flagMetadata: Record<string, unknown>;
  errorCode?: string;
  errorMessage?: string;
}

export interface ConfigurationChange {
  flagsChanged: string[];
  message?: string;
  /** performance.now() in the page. */
  at: number;
}

/** One request of the provider (its fetchImplementation), and what it got. */
export interface ProviderRequest {
  url: string;
  ifNoneMatch: string | null;
  at: number;
  status?: number;
  etag?: string | null;
  eventStreams?: Array<{ type: string; url: string; inactivityDelaySec?: number }>;
  failed?: { name: string; message: string };
}

export interface OfrepRecord {
  changes: ConfigurationChange[];
  events: Array<{ type: string; message?: string; at: number }>;
  requests: ProviderRequest[];
  providerStatus?: string;
}

/**
 * ofrep.html open on a page server's origin: the real OpenFeature web SDK with OFREPWebProvider, driven through
 * window.ofrep (page/ofrep.js). Waits are bounded, and a wait that runs out fails with everything the page
 * recorded: the provider's requests and events, and the browser's log.
 */
export class OfrepPage {
  private constructor(readonly page: BrowserPage) {}

  static async open(browser: Browser, server: PageServer): Promise<OfrepPage> {
    const page = await BrowserPage.open(browser, server, '/ofrep.html');
    if (!(await page.evaluate(() => typeof (globalThis as any).ofrep === 'object', undefined))) {
      await page.close();
      throw new Error(`ofrep.js (or a package it imports through the import map) did not load on ${server.origin}:\n${page.browserLog()}`);
    }
    return new OfrepPage(page);
  }

  start(options: OfrepStart): Promise<{ status: string; error?: { name: string; message: string } }> {
    return this.page.evaluate((o) => (globalThis as any).ofrep.start(o), options);
  }

  /** Starts the provider and fails unless it is READY. */
  async startReady(options: OfrepStart): Promise<void> {
    const started = await this.start(options);
    if (started.status !== 'READY' || started.error) {
      throw new Error(`OFREPWebProvider did not become ready: ${JSON.stringify(started)}\n${await this.explain()}`);
    }
  }

  read(reads: FlagRead[]): Promise<FlagDetails[]> {
    return this.page.evaluate((r) => (globalThis as any).ofrep.read(r), reads);
  }

  async readOne(key: string, type: FlagValueType, defaultValue: unknown): Promise<FlagDetails> {
    return (await this.read([{ key, type, defaultValue }]))[0];
  }

  recorded(): Promise<OfrepRecord> {
    return this.page.evaluate(() => (globalThis as any).ofrep.recorded(), undefined);
  }

  /** The event streams the browser opened (EventSource requests). */
  eventSources(): SentRequest[] {
    return this.page.sentRequests().filter((request) => request.resourceType === 'eventsource');
  }

  /**
   * The first ConfigurationChanged event past the first `after` that names flagKey, once it comes; fails after
   * timeoutMs saying what did come.
   */
  async waitForChange(flagKey: string, after: number, timeoutMs: number): Promise<ConfigurationChange> {
    const came = await this.page.becomes(
      ([key, skip]) =>
        (globalThis as any).ofrep
          .recorded()
          .changes.slice(skip)
          .some((change: ConfigurationChange) => change.flagsChanged.includes(key)),
      [flagKey, after] as const,
      timeoutMs,
    );
    const { changes } = await this.recorded();
    const change = changes.slice(after).find((candidate) => candidate.flagsChanged.includes(flagKey));
    if (!came || !change) {
      throw new Error(`No ConfigurationChanged event naming "${flagKey}" reached the page within ${timeoutMs} ms.\n${await this.explain()}`);
    }
    return change;
  }

  /**
   * The provider's bulk request made for a stream event with this ETag (OFREP: the event's etag goes out as
   * ?flagConfigEtag=), once its answer is in; fails after timeoutMs.
   */
  async waitForStreamRefetch(etag: string, timeoutMs: number): Promise<ProviderRequest> {
    // Twice the same test, since the page's copy is serialised into it: a request for `tag` that has its answer.
    const came = await this.page.becomes(
      (tag) =>
        (globalThis as any).ofrep
          .recorded()
          .requests.some(
            (r: ProviderRequest) => new URL(r.url).searchParams.get('flagConfigEtag') === tag && (r.status !== undefined || r.failed !== undefined),
          ),
      etag,
      timeoutMs,
    );
    const refetch = (await this.recorded()).requests.find(
      (r) => new URL(r.url).searchParams.get('flagConfigEtag') === etag && (r.status !== undefined || r.failed !== undefined),
    );
    if (!came || !refetch) {
      throw new Error(`The provider made no refetch for a stream event with ETag ${etag} within ${timeoutMs} ms.\n${await this.explain()}`);
    }
    return refetch;
  }

  /** What the page recorded, and the browser's log: the body of every failure message. */
  async explain(): Promise<string> {
    const recorded = await this.recorded().catch((error: Error) => `(could not read: ${error.message})`);
    return (
      `Recorded in the page: ${JSON.stringify(recorded, null, 2)}\n` +
      `Event streams opened: ${JSON.stringify(this.eventSources().map((request) => request.url))}\n` +
      `Browser log:\n${this.page.browserLog()}`
    );
  }

  close(): Promise<void> {
    return this.page.close();
  }
}
