import { readFileSync } from 'node:fs';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { extname, join } from 'node:path';
import { EsmModules, esmModules, MODULES_PREFIX } from './esm-modules';
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

/** What ofrep.js imports; the packages these import in turn are found by esmModules. */
const OFREP_PAGE_IMPORTS = ['@openfeature/web-sdk', '@openfeature/ofrep-web-provider'];

let modules: EsmModules | undefined;
/** Found on the OFREP page's first request, once per run: the other pages do not depend on these packages. */
function ofrepModules(): EsmModules {
  modules ??= esmModules(OFREP_PAGE_IMPORTS);
  return modules;
}

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
};

/**
 * A static site on its own origin: the test page (index.html and page.js, read from test/browser/page), the OFREP
 * page (ofrep.html and the module ofrep.js, with the OpenFeature packages it imports served from node_modules
 * under /modules/ and named by the page's import map), and a control PNG. Listens on 127.0.0.1 at a port the OS
 * picks.
 */
export async function startPageServer(): Promise<PageServer> {
  const files: Record<string, { type: string; body: Buffer }> = {
    '/': { type: 'text/html; charset=utf-8', body: readFileSync(join(PAGE_DIR, 'index.html')) },
    '/page.js': { type: TYPES['.js'], body: readFileSync(join(PAGE_DIR, 'page.js')) },
    '/ofrep.js': { type: TYPES['.js'], body: readFileSync(join(PAGE_DIR, 'ofrep.js')) },
    '/control.png': { type: 'image/png', body: solidPng(CONTROL_COLOUR) },
  };
  const ofrepFile = (path: string) => {
    if (path === '/ofrep.html') {
      const html = readFileSync(join(PAGE_DIR, 'ofrep.html'), 'utf8').replace('IMPORT_MAP', JSON.stringify(ofrepModules().importMap));
      return { type: 'text/html; charset=utf-8', body: Buffer.from(html) };
    }
    const file = path.startsWith(MODULES_PREFIX) ? ofrepModules().fileFor(path) : undefined;
    return file ? { type: TYPES[extname(file)] ?? 'application/octet-stream', body: readFileSync(file) } : undefined;
  };
  const server: Server = createServer((request, response) => {
    const path = new URL(request.url ?? '/', 'http://page').pathname;
    let file: { type: string; body: Buffer } | undefined;
    try {
      file = request.method === 'GET' ? (files[path] ?? ofrepFile(path)) : undefined;
    } catch (error) {
      // The OFREP page's packages could not be served (see esm-modules.ts): the page answers why.
      response.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' }).end(String(error));
      return;
    }
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
