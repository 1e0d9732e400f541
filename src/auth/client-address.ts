import type { IncomingMessage } from 'node:http';
import proxyAddr from 'proxy-addr';

/**
 * Which proxies may name the client in X-Forwarded-For: loopback only (a proxy on the same host, as nginx
 * in front of each instance). Express's `trust proxy` is set to the same value, so `request.ip` agrees.
 */
export const TRUSTED_PROXIES = 'loopback';

const trusted = proxyAddr.compile(TRUSTED_PROXIES);

/** The client's address as Express's `request.ip` gives it, for a raw Node request (the lean poll). */
export function clientAddress(request: IncomingMessage): string {
  return proxyAddr(request as Parameters<typeof proxyAddr>[0], trusted);
}
