/** What the person does at the provider: sign in as an account (its `sub`; any password does), or cancel. */
export type ProviderAction = { login: string } | { cancel: true };

const MAX_STEPS = 20;

/**
 * Plays the browser from the client's redirect to the provider until the provider redirects back: follows
 * redirects and submits the provider's pages (test/support/servers/oidc-provider-process.mjs: a login form, then a consent
 * form, each with a Cancel link) with a cookie jar, over plain HTTP. Answers the URL the provider sends the browser
 * to at the client's redirect_uri (read from `authorizationUrl`): with code and state, or with error=access_denied
 * after a cancel. That URL is not requested: the caller hands it to the client.
 */
export async function signInAtProvider(authorizationUrl: string, action: ProviderAction): Promise<string> {
  const redirectUri = new URL(authorizationUrl).searchParams.get('redirect_uri');
  if (!redirectUri) throw new Error(`no redirect_uri in ${authorizationUrl}`);
  const jar = new CookieJar();
  let next: { url: URL; form?: URLSearchParams } = { url: new URL(authorizationUrl) };
  for (let step = 0; step < MAX_STEPS; step++) {
    if (sameEndpoint(next.url, new URL(redirectUri))) return next.url.href;
    const response = await fetch(next.url, {
      method: next.form ? 'POST' : 'GET',
      body: next.form,
      redirect: 'manual',
      headers: { cookie: jar.cookieHeader(next.url) },
    });
    jar.store(next.url, response.headers.getSetCookie());
    const location = response.headers.get('location');
    if (response.status >= 300 && response.status < 400 && location) {
      await response.body?.cancel();
      next = { url: new URL(location, next.url) };
      continue;
    }
    const page = await response.text();
    if (response.status !== 200) throw new Error(`the provider answered ${next.url.href} with ${response.status}: ${textOf(page)}`);
    next = 'cancel' in action ? cancelLink(page, next.url) : filledForm(page, next.url, action.login);
  }
  throw new Error(`the provider did not send the browser back to ${redirectUri} within ${MAX_STEPS} steps`);
}

function sameEndpoint(a: URL, b: URL): boolean {
  return a.origin === b.origin && a.pathname === b.pathname;
}

/** The page's form, as a browser submits it: hidden fields as they are, `login` and the password typed in. */
function filledForm(page: string, pageUrl: URL, login: string): { url: URL; form: URLSearchParams } {
  const form = /<form\b([^>]*)>([\s\S]*?)<\/form>/i.exec(page);
  if (!form || attribute(form[1], 'method')?.toLowerCase() !== 'post') throw new Error(`no form to submit: ${textOf(page)}`);
  const fields = new URLSearchParams();
  for (const [, input] of form[2].matchAll(/<input\b([^>]*)>/gi)) {
    const name = attribute(input, 'name');
    const type = attribute(input, 'type') ?? 'text';
    if (!name) continue;
    if (type === 'hidden') fields.append(name, attribute(input, 'value') ?? '');
    else if (name === 'login') fields.append(name, login);
    else if (type === 'password') fields.append(name, 'any password will do');
    else throw new Error(`the provider's form asks for "${name}", which this driver cannot fill in`);
  }
  return { url: new URL(attribute(form[1], 'action') ?? pageUrl.href, pageUrl), form: fields };
}

function cancelLink(page: string, pageUrl: URL): { url: URL } {
  const link = /<a\b([^>]*)>\s*\[?\s*Cancel\b/i.exec(page);
  const href = link && attribute(link[1], 'href');
  if (!href) throw new Error(`no Cancel link: ${textOf(page)}`);
  return { url: new URL(href, pageUrl) };
}

/** An attribute of an HTML tag, its entities decoded (the provider's templates escape & < > " '). */
function attribute(tag: string, name: string): string | undefined {
  const match = new RegExp(`\\b${name}\\s*=\\s*"([^"]*)"`, 'i').exec(tag);
  return match?.[1].replace(/&(amp|lt|gt|quot|#39);/g, (_, entity: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" })[entity]!);
}

/** A page's text, shortened, for error messages. */
function textOf(page: string): string {
  return page
    .replace(/<style[\s\S]*?<\/style>/gi, '')
    .replace(/<[^>]+>/g, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, 500);
}

/** The cookies of one browser on one host, by name and path (RFC 6265's path matching and expiry; no domains). */
class CookieJar {
  private readonly cookies = new Map<string, { name: string; value: string; path: string }>();

  store(requestUrl: URL, setCookieHeaders: string[]): void {
    for (const header of setCookieHeaders) {
      const [pair, ...attributes] = header.split(';');
      const separator = pair.indexOf('=');
      const name = pair.slice(0, separator).trim();
      const value = pair.slice(separator + 1).trim();
      let path = defaultPath(requestUrl.pathname);
      let expired = false;
      for (const attribute of attributes) {
        const [key, ...rest] = attribute.split('=');
        const attributeValue = rest.join('=').trim();
        switch (key.trim().toLowerCase()) {
          case 'path':
            path = attributeValue.startsWith('/') ? attributeValue : defaultPath(requestUrl.pathname);
            break;
          case 'max-age':
            expired ||= Number(attributeValue) <= 0;
            break;
          case 'expires':
            expired ||= Date.parse(attributeValue) <= Date.now();
            break;
        }
      }
      const key = `${path} ${name}`;
      if (expired) this.cookies.delete(key);
      else this.cookies.set(key, { name, value, path });
    }
  }

  /** The Cookie header a browser sends to `url`: longer paths first. */
  cookieHeader(url: URL): string {
    return [...this.cookies.values()]
      .filter((cookie) => pathMatches(url.pathname, cookie.path))
      .sort((a, b) => b.path.length - a.path.length)
      .map((cookie) => `${cookie.name}=${cookie.value}`)
      .join('; ');
  }
}

function defaultPath(requestPath: string): string {
  const lastSlash = requestPath.lastIndexOf('/');
  return lastSlash <= 0 ? '/' : requestPath.slice(0, lastSlash);
}

function pathMatches(requestPath: string, cookiePath: string): boolean {
  return requestPath === cookiePath || (requestPath.startsWith(cookiePath) && (cookiePath.endsWith('/') || requestPath[cookiePath.length] === '/'));
}

/** The path and query of a URL the provider sent the browser to: the callback as the route receives it. */
export function callbackPathOf(url: string): string {
  const { pathname, search } = new URL(url);
  return pathname + search;
}

/** The cookie pairs (name=value) of a Set-Cookie answer, to send back as a Cookie header. */
export function cookiePairsOf(setCookie: string[] | string | undefined): string {
  return ([] as string[])
    .concat(setCookie ?? [])
    .map((header) => header.split(';')[0])
    .join('; ');
}
