import { createHmac, timingSafeEqual } from 'node:crypto';
import { isUuid } from '../object-store/object-store';
import { StorageErrors } from '../storage.errors';

/** A signed URL works for 15 minutes. */
export const UPLOAD_URL_LIFETIME_MS = 15 * 60 * 1000;

/** What a pre-allocated URL authorizes: one PUT of exactly `size` bytes of `contentType` to one item. */
export interface PreallocatedGrant {
  mode: 'put';
  organizationId: string;
  mediaId: string;
  size: number;
  contentType: string;
  expiresAt: number; // unix seconds
}

/** What a non-allocated URL authorizes: one multipart POST into the organization; `nonce` makes it single-use. */
export interface NonAllocatedGrant {
  mode: 'post';
  organizationId: string;
  nonce: string;
  expiresAt: number; // unix seconds
}

export type UploadGrant = PreallocatedGrant | NonAllocatedGrant;

/** The query string of a request to the upload host, as Express parsed it. */
export type UploadQuery = Record<string, unknown>;

const DIGITS = /^\d{1,16}$/;
const SIGNATURE = /^[A-Za-z0-9_-]{43}$/;

/**
 * The signed upload URLs, built and read back here and nowhere else:
 * - pre-allocated: `PUT {upload_url}/<organizationId>/<mediaId>?size&contentType&expires&signature`;
 * - non-allocated: `POST {upload_url}/<organizationId>?nonce&expires&signature`.
 *
 * The signature is an HMAC-SHA256 over everything the URL authorizes (mode, organization, item or nonce,
 * size, content type, expiry), so changing any query parameter or path segment invalidates it. Expiry is
 * checked only after the signature, so a forged expiry never reads as "expired". A URL that fails any
 * check is refused with 403.
 */
export class SignedUrls {
  /** `uploadUrl` is {upload_url}, the upload host's public address. */
  constructor(
    private readonly secret: Buffer,
    private readonly uploadUrl: string,
  ) {}

  preallocatedUrl(grant: Omit<PreallocatedGrant, 'mode'>): string {
    const { organizationId, mediaId, size, contentType, expiresAt } = grant;
    const signature = this.sign({ mode: 'put', ...grant });
    const query = new URLSearchParams({ size: String(size), contentType, expires: String(expiresAt), signature });
    return `${this.uploadUrl}/${organizationId}/${mediaId}?${query}`;
  }

  nonAllocatedUrl(grant: Omit<NonAllocatedGrant, 'mode'>): string {
    const { organizationId, nonce, expiresAt } = grant;
    const signature = this.sign({ mode: 'post', ...grant });
    const query = new URLSearchParams({ nonce, expires: String(expiresAt), signature });
    return `${this.uploadUrl}/${organizationId}?${query}`;
  }

  /** The grant of a PUT to a pre-allocated URL, from its path parameters and query, if unexpired at `now` (ms, the app's clock). */
  verifyPreallocated(organizationId: string, mediaId: string, query: UploadQuery, now: number): PreallocatedGrant {
    const { size, contentType, expires, signature } = query;
    if (!isUuid(organizationId) || !isUuid(mediaId) || !isDigits(size) || typeof contentType !== 'string' || !isDigits(expires)) {
      throw incomplete();
    }
    const grant: PreallocatedGrant = {
      mode: 'put',
      organizationId: organizationId.toLowerCase(),
      mediaId: mediaId.toLowerCase(),
      size: Number(size),
      contentType,
      expiresAt: Number(expires),
    };
    return this.verify(grant, signature, now);
  }

  /** The grant of a POST to a non-allocated URL, from its path parameter and query, if unexpired at `now` (ms, the app's clock). */
  verifyNonAllocated(organizationId: string, query: UploadQuery, now: number): NonAllocatedGrant {
    const { nonce, expires, signature } = query;
    if (!isUuid(organizationId) || typeof nonce !== 'string' || !isUuid(nonce) || !isDigits(expires)) throw incomplete();
    const grant: NonAllocatedGrant = {
      mode: 'post',
      organizationId: organizationId.toLowerCase(),
      nonce: nonce.toLowerCase(),
      expiresAt: Number(expires),
    };
    return this.verify(grant, signature, now);
  }

  private verify<G extends UploadGrant>(grant: G, signature: unknown, now: number): G {
    const mismatch = () => StorageErrors.uploadUrlInvalid('the signature does not match');
    if (typeof signature !== 'string' || !SIGNATURE.test(signature)) throw mismatch();
    const expected = Buffer.from(this.sign(grant), 'base64url');
    const given = Buffer.from(signature, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw mismatch();
    if (grant.expiresAt * 1000 <= now) throw StorageErrors.uploadUrlInvalid('it has expired; request a new signed URL');
    return grant;
  }

  private sign(grant: UploadGrant): string {
    return createHmac('sha256', this.secret).update(canonical(grant)).digest('base64url');
  }
}

function canonical(grant: UploadGrant): string {
  const fields =
    grant.mode === 'put'
      ? ['v1', grant.mode, grant.organizationId, grant.mediaId, String(grant.size), grant.contentType, String(grant.expiresAt)]
      : ['v1', grant.mode, grant.organizationId, grant.nonce, String(grant.expiresAt)];
  // Newlines cannot occur in any field (UUIDs, digits, a validated media type), so the join is unambiguous.
  return fields.join('\n');
}

function isDigits(value: unknown): value is string {
  return typeof value === 'string' && DIGITS.test(value);
}

function incomplete() {
  return StorageErrors.uploadUrlInvalid('it is not a complete signed upload URL');
}
