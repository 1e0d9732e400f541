import { createHash } from 'node:crypto';
import type { ServerResponse } from 'node:http';

/**
 * The Content-Security-Policy of a page the service writes itself with nothing active in it (the single sign-on result
 * pages): no script, no style, no image, nothing fetched, no form, never framed; its links still work.
 */
export const STATIC_PAGE_CSP = "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/**
 * The headers of an HTML page the service serves outside the console (whose own are in console/console-assets.ts):
 * its strict CSP, and no MIME sniffing, so that nothing served as text is run as script or style.
 */
export function setPageSecurityHeaders(response: Pick<ServerResponse, 'setHeader'>, contentSecurityPolicy: string): void {
  response.setHeader('Content-Security-Policy', contentSecurityPolicy);
  response.setHeader('X-Content-Type-Options', 'nosniff');
  response.setHeader('Referrer-Policy', 'same-origin');
}

/** A CSP source allowing exactly this inline text (a `<style>` block's content, or a `style` attribute's value). */
export function cspHash(text: string): string {
  return `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
}
