import { SignedUrls, UploadQuery } from './signed-urls';

const UPLOAD_URL = 'https://uploads.example.com/upload';

/** What the upload host's routes receive for a URL: its path parameters and its query. */
function request(url: string): { params: string[]; query: UploadQuery } {
  const parsed = new URL(url);
  expect(parsed.pathname.startsWith('/upload/')).toBe(true);
  return { params: parsed.pathname.slice('/upload/'.length).split('/'), query: Object.fromEntries(parsed.searchParams) };
}

function tamper(url: string, change: (u: URL) => void): string {
  const copy = new URL(url);
  change(copy);
  return copy.toString();
}

describe('SignedUrls', () => {
  const urls = new SignedUrls(Buffer.from('a-test-secret-that-is-long-enough'), UPLOAD_URL);
  const now = Date.UTC(2030, 0, 1);
  const put = {
    organizationId: '11111111-1111-4111-8111-111111111111',
    mediaId: '22222222-2222-4222-8222-222222222222',
    size: 1024,
    contentType: 'image/png',
    expiresAt: now / 1000 + 900,
  };
  const post = { organizationId: put.organizationId, nonce: '33333333-3333-4333-8333-333333333333', expiresAt: now / 1000 + 900 };

  const verifyPut = (url: string, at = now, signer = urls) => {
    const { params, query } = request(url);
    return signer.verifyPreallocated(params[0], params[1], query, at);
  };
  const verifyPost = (url: string, at = now, signer = urls) => {
    const { params, query } = request(url);
    return signer.verifyNonAllocated(params[0], query, at);
  };
  const refusal = (reason: RegExp) => expect.objectContaining({ status: 403, code: 'FORBIDDEN', message: expect.stringMatching(reason) });

  it('builds both kinds in the documented format', () => {
    const signed = new URL(urls.preallocatedUrl(put));
    expect(`${signed.origin}${signed.pathname}`).toBe(`${UPLOAD_URL}/${put.organizationId}/${put.mediaId}`);
    expect([...signed.searchParams.keys()]).toEqual(['size', 'contentType', 'expires', 'signature']);
    const open = new URL(urls.nonAllocatedUrl(post));
    expect(`${open.origin}${open.pathname}`).toBe(`${UPLOAD_URL}/${post.organizationId}`);
    expect([...open.searchParams.keys()]).toEqual(['nonce', 'expires', 'signature']);
  });

  it('accepts its own URLs until the expiry', () => {
    expect(verifyPut(urls.preallocatedUrl(put))).toEqual({ mode: 'put', ...put });
    expect(verifyPost(urls.nonAllocatedUrl(post))).toEqual({ mode: 'post', ...post });
    expect(verifyPut(urls.preallocatedUrl(put), put.expiresAt * 1000 - 1)).toEqual({ mode: 'put', ...put });
  });

  it('reads ids in either case as the same ids', () => {
    const upper = urls.preallocatedUrl(put).replace(put.mediaId, put.mediaId.toUpperCase());
    expect(verifyPut(upper).mediaId).toBe(put.mediaId);
  });

  it('refuses an expired URL as expired', () => {
    expect(() => verifyPut(urls.preallocatedUrl(put), put.expiresAt * 1000)).toThrow(refusal(/expired/));
    expect(() => verifyPost(urls.nonAllocatedUrl(post), post.expiresAt * 1000)).toThrow(refusal(/expired/));
  });

  it.each<[string, (u: URL) => void]>([
    ['organization', (u) => (u.pathname = u.pathname.replace(put.organizationId, '44444444-4444-4444-8444-444444444444'))],
    ['item', (u) => (u.pathname = u.pathname.replace(put.mediaId, '55555555-5555-4555-8555-555555555555'))],
    ['size', (u) => u.searchParams.set('size', '1025')],
    ['content type', (u) => u.searchParams.set('contentType', 'text/html')],
    ['expiry (a later one reads as tampered, not as valid)', (u) => u.searchParams.set('expires', String(put.expiresAt + 3600))],
  ])('refuses a URL whose %s was changed', (_field, change) => {
    expect(() => verifyPut(tamper(urls.preallocatedUrl(put), change))).toThrow(refusal(/signature does not match/));
  });

  it('refuses one kind for the other, and another secret', () => {
    const asPost = tamper(urls.preallocatedUrl(put), (u) => {
      u.pathname = `/upload/${put.organizationId}`;
      u.search = new URLSearchParams({ nonce: put.mediaId, expires: String(put.expiresAt), signature: u.searchParams.get('signature')! }).toString();
    });
    expect(() => verifyPost(asPost)).toThrow(refusal(/signature does not match/));
    const other = new SignedUrls(Buffer.from('another-secret-that-is-long-enough'), UPLOAD_URL);
    expect(() => verifyPut(urls.preallocatedUrl(put), now, other)).toThrow(refusal(/signature does not match/));
  });

  it('refuses missing and malformed signatures, and incomplete URLs', () => {
    const signed = urls.preallocatedUrl(put);
    expect(() => verifyPut(tamper(signed, (u) => u.searchParams.delete('signature')))).toThrow(refusal(/signature does not match/));
    expect(() => verifyPut(tamper(signed, (u) => u.searchParams.set('signature', 'short')))).toThrow(refusal(/signature does not match/));
    const signature = new URL(signed).searchParams.get('signature')!;
    const flipped = signature.slice(0, -1) + (signature.endsWith('A') ? 'B' : 'A');
    expect(() => verifyPut(tamper(signed, (u) => u.searchParams.set('signature', flipped)))).toThrow(refusal(/signature does not match/));
    for (const name of ['size', 'contentType', 'expires']) {
      expect(() => verifyPut(tamper(signed, (u) => u.searchParams.delete(name)))).toThrow(refusal(/not a complete signed upload URL/));
    }
    expect(() => verifyPut(tamper(signed, (u) => u.searchParams.set('size', '1e3')))).toThrow(refusal(/not a complete/));
    expect(() => verifyPost(tamper(urls.nonAllocatedUrl(post), (u) => u.searchParams.set('nonce', 'x')))).toThrow(refusal(/not a complete/));
  });
});
