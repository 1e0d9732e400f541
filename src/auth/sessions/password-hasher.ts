import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { Inject, Injectable, ServiceUnavailableException } from '@nestjs/common';

/** scrypt's cost parameters: N (CPU and memory), r (block size), p (parallelism). */
export interface ScryptCost {
  N: number;
  r: number;
  p: number;
}

/**
 * OWASP's Password Storage Cheat Sheet: scrypt with N = 2^17, r = 8, p = 1. One hash takes 128 MiB (128 * N * r
 * bytes), above Node's default maxmem of 32 MiB, and a few hundred milliseconds of one core.
 */
export const OWASP_SCRYPT_COST: ScryptCost = { N: 2 ** 17, r: 8, p: 1 };

/** The cost new hashes are made with (OWASP's; tests provide a cheaper one). Hashes name their cost, so either verifies the other's. */
export const SCRYPT_COST = Symbol('SCRYPT_COST');

const KEY_LENGTH = 32;
const SALT_LENGTH = 16;
const PREFIX = 'scrypt';

/**
 * Slow, salted password hashes (`scrypt$N$r$p$<salt>$<hash>`, base64url), computed on libuv's thread pool so
 * the event loop never waits for one, at most MAX_CONCURRENT at a time (each takes 128 MiB and a pool thread: the
 * pool's other threads stay free for files and DNS), with at most MAX_WAITING queued behind them; past that a
 * sign-in answers 503 rather than piling up memory. Verification compares in constant time.
 */
@Injectable()
export class PasswordHasher {
  static readonly MAX_CONCURRENT = 2;
  static readonly MAX_WAITING = 100;

  private running = 0;
  private readonly queue: Array<() => void> = [];
  constructor(@Inject(SCRYPT_COST) private readonly cost: ScryptCost = OWASP_SCRYPT_COST) {}

  async hash(password: string): Promise<string> {
    const salt = randomBytes(SALT_LENGTH);
    const { N, r, p } = this.cost;
    const key = await this.derive(password, salt, this.cost);
    return [PREFIX, N, r, p, salt.toString('base64url'), key.toString('base64url')].join('$');
  }

  /** Whether `password` is the one `stored` was made from; a malformed stored hash matches nothing. */
  async verify(password: string, stored: string): Promise<boolean> {
    const parsed = parse(stored);
    if (!parsed) return false;
    const key = await this.derive(password, parsed.salt, parsed.cost);
    return key.length === parsed.key.length && timingSafeEqual(key, parsed.key);
  }

  /**
   * The work of a verification without a stored hash to check against: what a sign-in with an unknown email costs,
   * so that it takes as long as a wrong password.
   */
  async verifyNothing(password: string): Promise<false> {
    await this.derive(password, randomBytes(SALT_LENGTH), this.cost);
    return false;
  }

  private async derive(password: string, salt: Buffer, cost: ScryptCost): Promise<Buffer> {
    await this.slot();
    try {
      return await new Promise<Buffer>((resolve, reject) => {
        scrypt(password.normalize('NFC'), salt, KEY_LENGTH, { ...cost, maxmem: 256 * cost.N * cost.r }, (error, key) =>
          error ? reject(error) : resolve(key),
        );
      });
    } finally {
      const next = this.queue.shift();
      if (next)
        next(); // its place passes to the next in line
      else this.running -= 1;
    }
  }

  private async slot(): Promise<void> {
    if (this.running < PasswordHasher.MAX_CONCURRENT) {
      this.running += 1;
      return;
    }
    if (this.queue.length >= PasswordHasher.MAX_WAITING) {
      throw Object.assign(new ServiceUnavailableException('Too many sign-ins are being checked at once; try again in a second'), {
        retryAfterSeconds: 1,
      });
    }
    // A finishing hash hands its place over, so `running` stays as it is.
    await new Promise<void>((resolve) => this.queue.push(resolve));
  }
}

function parse(stored: string): { cost: ScryptCost; salt: Buffer; key: Buffer } | null {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== PREFIX) return null;
  const [N, r, p] = parts.slice(1, 4).map(Number);
  if (![N, r, p].every(Number.isSafeInteger) || N < 2 || (N & (N - 1)) !== 0 || r < 1 || p < 1) return null;
  return { cost: { N, r, p }, salt: Buffer.from(parts[4], 'base64url'), key: Buffer.from(parts[5], 'base64url') };
}
