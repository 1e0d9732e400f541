import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { link, mkdir, readFile, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** Spec 8: a signed URL works for 15 minutes. */
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

export type VerifyResult<G> = { ok: true; grant: G } | { ok: false; reason: 'malformed' | 'signature' | 'expired' };

/**
 * HMAC-SHA256 over everything the URL authorizes (mode, organization, item or nonce, size, content type,
 * expiry), so changing any query parameter or path segment invalidates it. Expiry is checked only after
 * the signature, so a forged expiry never reads as "expired".
 */
export class UploadSigner {
  constructor(private readonly secret: Buffer) {}

  sign(grant: UploadGrant): string {
    return createHmac('sha256', this.secret).update(canonical(grant)).digest('base64url');
  }

  verify<G extends UploadGrant>(grant: G, signature: string | undefined, now = Date.now()): VerifyResult<G> {
    if (!signature || !/^[A-Za-z0-9_-]{43}$/.test(signature)) return { ok: false, reason: 'malformed' };
    const expected = Buffer.from(this.sign(grant), 'base64url');
    const given = Buffer.from(signature, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { ok: false, reason: 'signature' };
    if (grant.expiresAt * 1000 <= now) return { ok: false, reason: 'expired' };
    return { ok: true, grant };
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

const SECRET_FILE = 'upload-signing-secret';

/**
 * The configured secret, or one generated on first boot and kept in `<dataDir>/upload-signing-secret`
 * (mode 0600) so URLs survive restarts. The file is written under a private name and linked into place, so
 * instances booting together never read a half-written secret: the loser of the link reads the winner's.
 */
export async function loadSigningSecret(configured: string | undefined, dataDir: string): Promise<Buffer> {
  if (configured) return Buffer.from(configured, 'utf8');
  const path = join(dataDir, SECRET_FILE);
  await mkdir(dataDir, { recursive: true });
  const candidate = `${path}.${process.pid}.${randomBytes(4).toString('hex')}`;
  await writeFile(candidate, randomBytes(32).toString('hex'), { flag: 'wx', mode: 0o600 });
  try {
    await link(candidate, path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  } finally {
    await unlink(candidate);
  }
  const stored = (await readFile(path, 'utf8')).trim();
  if (stored.length < 32) throw new Error(`${path} is damaged (shorter than 32 characters); delete it to generate a new one`);
  return Buffer.from(stored, 'utf8');
}
