import { promises as dns } from 'node:dns';
import { isIP } from 'node:net';
import { forbiddenRange, ForbiddenRange } from './address-policy';

/** The operator's choices (WEBHOOK_ALLOW_HTTP, WEBHOOK_ALLOW_PRIVATE); both off in production. */
export interface WebhookUrlPolicy {
  allowHttp: boolean;
  allowPrivate: boolean;
}

/** Every address a host name resolves to; tests inject one to play DNS (and DNS rebinding). */
export type Lookup = (hostname: string) => Promise<{ address: string; family: number }[]>;

/** The system resolver (getaddrinfo, so /etc/hosts too), every address in the order it gave them. */
export const systemLookup: Lookup = (hostname) => dns.lookup(hostname, { all: true, verbatim: true });

export const MAX_WEBHOOK_URL_LENGTH = 2048;

/**
 * How long the check waits for DNS before it answers that the host could not be resolved: the admin's request waits
 * on it, and getaddrinfo alone may take several times its resolver's 5 s timeout.
 */
export const URL_CHECK_DNS_TIMEOUT_MS = 5_000;

/**
 * Null when `raw` may be a webhook's URL under `policy`, otherwise why not, as one sentence starting with "url " (the
 * field's name: the 400's message). A host name is resolved and every address it gives is judged, since a client
 * may connect to any of them; the sender judges again the address it actually connects to (DNS may answer
 * differently by then), so this check is for a clear answer at creation, not the guard itself.
 */
export async function checkWebhookUrl(
  raw: string,
  policy: WebhookUrlPolicy,
  lookup: Lookup = systemLookup,
  dnsTimeoutMs = URL_CHECK_DNS_TIMEOUT_MS,
): Promise<string | null> {
  const absolute = policy.allowHttp ? 'url must be an absolute http or https URL' : 'url must be an absolute https URL';
  if (raw.length > MAX_WEBHOOK_URL_LENGTH) return `url must be at most ${MAX_WEBHOOK_URL_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return absolute;
  }
  if (url.protocol === 'http:' && !policy.allowHttp) return 'url must use https (http is not allowed by the operator)';
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return absolute;
  // A fragment is never sent, so a URL with one would not be the URL that is called.
  if (url.hash !== '' || raw.includes('#')) return 'url must not have a fragment (#...)';

  // The WHATWG parser has already turned 2130706433, 0x7f.1 and 0177.0.0.1 into 127.0.0.1 and bracketed IPv6.
  const host = hostAddress(url);
  if (isIP(host)) {
    const range = policy.allowPrivate ? null : forbiddenRange(host);
    return range ? `url points to ${describeRange(range)} (${host})` : null;
  }

  let addresses: { address: string }[] | 'timed out';
  let timer: NodeJS.Timeout | undefined;
  try {
    addresses = await Promise.race([
      lookup(host),
      new Promise<'timed out'>((resolve) => (timer = setTimeout(() => resolve('timed out'), dnsTimeoutMs))),
    ]);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOTFOUND' || code === 'ENODATA') return `url's host ${host} does not resolve`;
    return `url's host ${host} could not be resolved (${code ?? 'lookup failed'})`;
  } finally {
    clearTimeout(timer);
  }
  if (addresses === 'timed out') return `url's host ${host} could not be resolved (no answer within ${dnsTimeoutMs / 1000} s)`;
  if (addresses.length === 0) return `url's host ${host} does not resolve`;
  if (policy.allowPrivate) return null;
  for (const { address } of addresses) {
    const range = isIP(address) ? forbiddenRange(address) : 'reserved';
    if (range) return `url resolves to ${describeRange(range)} (${address})`;
  }
  return null;
}

/** The URL's host as an address or a name to resolve: IPv6 without its brackets. */
export function hostAddress(url: URL): string {
  return url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
}

/** "a loopback address", "an unspecified address", ... */
export function describeRange(range: ForbiddenRange): string {
  return `${range === 'unspecified' ? 'an' : 'a'} ${range} address`;
}

// A first path segment is kept only when it reads like a word ("services", "api", "hooks"): random tokens mix digits
// or case (webhook.site puts a UUID there), and a 20-letter all-lowercase token is rare enough to accept.
const PLAIN_SEGMENT = /^[a-z][a-z._-]{0,31}$/;

/**
 * `url` as it may appear in logs and error messages: scheme, host, port and the first path segment. User info and
 * query are dropped (credentials, tokens) and so is the fragment; the rest of the path is replaced by "…" because
 * Slack (`/services/T…/B…/secret`) and Discord (`/api/webhooks/id/token`) put the secret in the path itself.
 */
export function redactUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return '(invalid url)';
  }
  const [first, ...rest] = parsed.pathname.slice(1).split('/');
  let path = '/';
  if (first !== '' && !PLAIN_SEGMENT.test(first)) path = '/…';
  else if (first !== '') path += rest.join('') === '' ? parsed.pathname.slice(1) : `${first}/…`;
  return `${parsed.protocol}//${parsed.host}${path}`;
}
