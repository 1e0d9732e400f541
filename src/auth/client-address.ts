import type { IncomingMessage } from 'node:http';
import proxyAddr from 'proxy-addr';

/**
 * The client's address as Express's `request.ip` gives it (Express's `trust proxy` is set from the same
 * TRUST_PROXY), for any Node request, the lean poll's included: the socket's address, or the one a trusted
 * proxy put in X-Forwarded-For.
 */
export function clientAddressResolver(trustProxy: readonly string[]): (request: IncomingMessage) => string {
  const trusted = proxyAddr.compile([...trustProxy]);
  return (request) => proxyAddr(request as Parameters<typeof proxyAddr>[0], trusted);
}
