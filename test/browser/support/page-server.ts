import { readFileSync } from 'node:fs';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Rgb, solidPng } from './png';

export interface PageServer {
  /** `http://127.0.0.1:<port>`: a different origin from the app's `http://localhost:<port>`. */
  origin: string;
  /** A PNG served by this origin with no CORS headers at all: what a canvas may not read cross-origin. */
  controlPngUrl: string;
  close(): Promise<void>;
}

/** The colour of the page server's own PNG (the control image). */
export const CONTROL_COLOUR: Rgb = [10, 200, 10];

const PAGE_DIR = join(__dirname, '..', 'page');

/**
 * A static site on its own origin: the test page (index.html and page.js, read from test/browser/page) and a
 * control PNG. Listens on 127.0.0.1 at a port the OS picks.
 */
export async function startPageServer(): Promise<PageServer> {
  const files: Record<string, { type: string; body: Buffer }> = {
    '/': { type: 'text/html; charset=utf-8', body: readFileSync(join(PAGE_DIR, 'index.html')) },
    '/page.js': { type: 'text/javascript; charset=utf-8', body: readFileSync(join(PAGE_DIR, 'page.js')) },
    '/control.png': { type: 'image/png', body: solidPng(CONTROL_COLOUR) },
  };
  const server: Server = createServer((request, response) => {
    const file = request.method === 'GET' ? files[new URL(request.url ?? '/', 'http://page').pathname] : undefined;
    if (!file) {
      response.writeHead(404, { 'Content-Type': 'text/plain' }).end('not found');
      return;
    }
    response.writeHead(200, { 'Content-Type': file.type, 'Content-Length': file.body.length, 'Cache-Control': 'no-store' });
    response.end(file.body);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    origin,
    controlPngUrl: `${origin}/control.png`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
