import { checkWebhookUrl, Lookup, redactUrl, WebhookUrlPolicy } from './webhook-url';

const strict: WebhookUrlPolicy = { allowHttp: false, allowPrivate: false };
const open: WebhookUrlPolicy = { allowHttp: true, allowPrivate: true };

/** DNS as a table; a name it does not hold does not resolve. */
function fakeDns(table: Record<string, string[]>): Lookup & { calls: string[] } {
  const calls: string[] = [];
  const lookup = async (hostname: string) => {
    calls.push(hostname);
    const addresses = table[hostname];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  return Object.assign(lookup, { calls });
}

const dns = fakeDns({
  'hooks.example.com': ['93.184.216.34', '2606:4700::6810:84e5'],
  'internal.example.com': ['10.0.0.5'],
  'mixed.example.com': ['93.184.216.34', '192.168.1.20'],
  'metadata.example.com': ['169.254.169.254'],
  'empty.example.com': [],
});

describe('checkWebhookUrl', () => {
  it.each([
    ['https://hooks.example.com/services/T0/B0/xyz', strict, null],
    ['https://user:secret@hooks.example.com/x?token=1', strict, null],
    ['https://hooks.example.com:8443/x', strict, null],
    ['not a url', strict, 'url must be an absolute https URL'],
    ['/relative/path', strict, 'url must be an absolute https URL'],
    ['ftp://hooks.example.com/', strict, 'url must be an absolute https URL'],
    ['javascript:alert(1)', strict, 'url must be an absolute https URL'],
    ['ftp://hooks.example.com/', open, 'url must be an absolute http or https URL'],
    ['http://hooks.example.com/', strict, 'url must use https (http is not allowed by the operator)'],
    ['http://hooks.example.com/', { allowHttp: true, allowPrivate: false }, null],
    ['https://hooks.example.com/x#part', strict, 'url must not have a fragment (#...)'],
    ['https://hooks.example.com/x#', strict, 'url must not have a fragment (#...)'],
    [`https://hooks.example.com/${'a'.repeat(2048)}`, strict, 'url must be at most 2048 characters'],
    ['https://internal.example.com/', strict, 'url resolves to a private address (10.0.0.5)'],
    ['https://mixed.example.com/', strict, 'url resolves to a private address (192.168.1.20)'],
    ['https://metadata.example.com/', strict, 'url resolves to a metadata address (169.254.169.254)'],
    ['https://internal.example.com/', { allowHttp: false, allowPrivate: true }, null],
    ['https://example.invalid/', strict, "url's host example.invalid does not resolve"],
    ['https://empty.example.com/', strict, "url's host empty.example.com does not resolve"],
    ['https://example.invalid/', open, "url's host example.invalid does not resolve"],
  ])('%s (%o) -> %p', async (url, policy, expected) => {
    expect(await checkWebhookUrl(url, policy, dns)).toBe(expected);
  });

  it('accepts a URL of exactly 2048 characters', async () => {
    const url = 'https://hooks.example.com/';
    expect(await checkWebhookUrl(url + 'a'.repeat(2048 - url.length), strict, dns)).toBeNull();
  });

  it.each([
    ['https://127.0.0.1/', 'url points to a loopback address (127.0.0.1)'],
    ['https://[::1]/', 'url points to a loopback address (::1)'],
    ['https://2130706433/', 'url points to a loopback address (127.0.0.1)'],
    ['https://0x7f.1/', 'url points to a loopback address (127.0.0.1)'],
    ['https://0177.0.0.1/', 'url points to a loopback address (127.0.0.1)'],
    ['https://[::ffff:127.0.0.1]/', 'url points to a loopback address (::ffff:7f00:1)'],
    ['https://169.254.169.254/latest/meta-data/', 'url points to a metadata address (169.254.169.254)'],
    ['https://[fd00:ec2::254]/', 'url points to a metadata address (fd00:ec2::254)'],
    ['https://172.16.0.1/', 'url points to a private address (172.16.0.1)'],
    ['https://0.0.0.0/', 'url points to an unspecified address (0.0.0.0)'],
    ['https://[fe80::1]/', 'url points to a link-local address (fe80::1)'],
  ])('judges the IP literal of %s without DNS', async (url, expected) => {
    const lookup = fakeDns({});
    expect(await checkWebhookUrl(url, strict, lookup)).toBe(expected);
    expect(await checkWebhookUrl(url, { allowHttp: false, allowPrivate: true }, lookup)).toBeNull();
    expect(lookup.calls).toEqual([]);
  });

  it('accepts a public IP literal', async () => {
    expect(await checkWebhookUrl('https://172.15.255.255/', strict, fakeDns({}))).toBeNull();
  });

  it('never repeats user info or query in its message', async () => {
    const message = await checkWebhookUrl('https://alice:hunter2@internal.example.com/x?token=sekrit', strict, dns);
    expect(message).toBe('url resolves to a private address (10.0.0.5)');
  });

  it('says so when DNS fails for another reason than a missing name', async () => {
    const failing: Lookup = async () => {
      throw Object.assign(new Error('getaddrinfo EAI_AGAIN'), { code: 'EAI_AGAIN' });
    };
    expect(await checkWebhookUrl('https://hooks.example.com/', strict, failing)).toBe(
      "url's host hooks.example.com could not be resolved (EAI_AGAIN)",
    );
  });

  it('answers within its DNS timeout when the resolver does not', async () => {
    const silent: Lookup = () => new Promise(() => undefined);
    expect(await checkWebhookUrl('https://hooks.example.com/', strict, silent, 50)).toBe(
      "url's host hooks.example.com could not be resolved (no answer within 0.05 s)",
    );
  });

  it('resolves localhost with the system resolver and refuses it', async () => {
    expect(await checkWebhookUrl('https://localhost:3000/hook', strict)).toMatch(/^url resolves to a loopback address \(/);
  });
});

describe('redactUrl', () => {
  it.each([
    ['https://hooks.slack.com/services/T0/B0/xyz?token=1', 'https://hooks.slack.com/services/…'],
    ['https://discord.com/api/webhooks/1234/abcDEF', 'https://discord.com/api/…'],
    ['https://alice:hunter2@example.com:8443/hook?sig=abc#frag', 'https://example.com:8443/hook'],
    ['https://example.com', 'https://example.com/'],
    ['https://example.com/?token=1', 'https://example.com/'],
    ['https://example.com/hooks/', 'https://example.com/hooks/'],
    ['https://webhook.site/0e9f4b8a-1c2d-4e5f-8a9b-0c1d2e3f4a5b', 'https://webhook.site/…'],
    ['https://example.com/AbCdEfGhIjKl/rest', 'https://example.com/…'],
    ['http://[::1]:3000/x/y', 'http://[::1]:3000/x/…'],
    ['not a url', '(invalid url)'],
  ])('%s -> %s', (url, expected) => {
    expect(redactUrl(url)).toBe(expected);
  });
});
