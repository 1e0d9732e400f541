import { createReadStream, existsSync, readFileSync, statSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { extname, join, normalize, sep } from 'node:path';
import type { AppConfig } from '../config/app-config';

/** Where the console is served: `{PUBLIC_URL}/console`, and deep links below it. */
export const CONSOLE_ROUTE = 'console';
const CONSOLE_PATH = `/${CONSOLE_ROUTE}`;

/**
 * Where `npm run build` puts the built console (console/build.mjs): dist/public/console at the repository root,
 * reached the same way from src/console (tests) and dist/console (the built service).
 */
export const CONSOLE_DIR = join(__dirname, '..', '..', 'dist', 'public', 'console');

/** Vite names every built asset with a hash of its content: the name changes whenever the bytes do. */
const HASHED_ASSET = /^\/assets\/[^/]+-[A-Za-z0-9_-]{8,}\.[a-z0-9]+$/;
export const ASSET_CACHE_CONTROL = 'public, max-age=31536000, immutable';
export const PAGE_CACHE_CONTROL = 'no-store';

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.json': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
};

/**
 * The console's Content-Security-Policy: scripts and styles from this origin only (no inline script, no eval), API
 * calls to this origin and PUBLIC_URL's (uploads go to `{PUBLIC_URL}/upload`), images also from the CDN (the storage
 * gallery) and as blobs (previews of a file before it is uploaded), and never framed.
 */
export function consoleContentSecurityPolicy(config: AppConfig): string {
  const publicOrigin = new URL(config.urls.publicUrl).origin;
  const cdnOrigin = new URL(config.urls.cdnUrl).origin;
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    `img-src 'self' data: blob: ${unique(publicOrigin, cdnOrigin)}`,
    "font-src 'self'",
    `connect-src 'self' ${publicOrigin}`,
    "manifest-src 'self'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

function unique(...origins: string[]): string {
  return [...new Set(origins)].join(' ');
}

/**
 * Serves the built console: `/` redirects to `/console`; a hashed asset is served as it is, cached for a year; any
 * other path under `/console` (a deep link such as `/console/flags/<id>`) answers the app's index.html, never cached,
 * with the CSP. Nothing outside `/` and `/console` is touched, so the API, the upload host, the CDN and OFREP keep
 * every path of theirs. Without a built console, `/console` says how to build it.
 */
export function consoleAssets(config: AppConfig, dir = CONSOLE_DIR) {
  const csp = consoleContentSecurityPolicy(config);
  let index: Buffer | undefined;
  const indexHtml = (): Buffer | undefined => {
    if (index === undefined && existsSync(join(dir, 'index.html'))) index = readFileSync(join(dir, 'index.html'));
    return index;
  };

  return (request: IncomingMessage, response: ServerResponse, next: () => void): void => {
    const { method } = request;
    const url = request.url ?? '/';
    const query = url.indexOf('?');
    const path = query === -1 ? url : url.slice(0, query);
    if (method !== 'GET' && method !== 'HEAD') return next();
    if (path === '/') {
      response.writeHead(302, { Location: CONSOLE_PATH, 'Cache-Control': PAGE_CACHE_CONTROL });
      response.end();
      return;
    }
    if (path !== CONSOLE_PATH && !path.startsWith(`${CONSOLE_PATH}/`)) return next();

    const inside = path.slice(CONSOLE_PATH.length) || '/';
    if (HASHED_ASSET.test(inside) || inside === '/favicon.svg') {
      const file = assetFile(dir, inside);
      if (file) {
        response.writeHead(200, {
          'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream',
          'Content-Length': statSync(file).size,
          'Cache-Control': inside.startsWith('/assets/') ? ASSET_CACHE_CONTROL : 'public, max-age=3600',
          'X-Content-Type-Options': 'nosniff',
        });
        if (method === 'HEAD') response.end();
        else createReadStream(file).pipe(response);
        return;
      }
      // A hashed name that is not there (an old build's): 404, never the page, which a script tag cannot run.
      response.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8', 'Cache-Control': PAGE_CACHE_CONTROL });
      response.end('Not found\n');
      return;
    }

    const html = indexHtml();
    const headers = {
      'Cache-Control': PAGE_CACHE_CONTROL,
      'Content-Security-Policy': csp,
      'X-Content-Type-Options': 'nosniff',
      'Referrer-Policy': 'same-origin',
    };
    if (!html) {
      response.writeHead(503, { ...headers, 'Content-Type': 'text/plain; charset=utf-8' });
      response.end('The console is not built: run `npm run build` (npm start does), then reload.\n');
      return;
    }
    response.writeHead(200, { ...headers, 'Content-Type': 'text/html; charset=utf-8', 'Content-Length': html.length });
    response.end(method === 'HEAD' ? undefined : html);
  };
}

/** The file under `dir` for an asset path, or undefined: never a path outside `dir`. */
function assetFile(dir: string, inside: string): string | undefined {
  const file = normalize(join(dir, inside));
  if (!file.startsWith(dir + sep)) return undefined;
  return existsSync(file) && statSync(file).isFile() ? file : undefined;
}
