import { createHash, randomBytes } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { Db, Transaction } from '../database/sql';

/** What a mailed link is for. */
export type EmailTokenPurpose = 'password-reset' | 'verify-email';

/** A mailed link's row, whatever became of it. */
export interface EmailToken {
  userId: string;
  email: string;
  expiresAt: Date;
  usedAt: Date | null;
}

/** What a mailed link carries: 32 random bytes (256 bits), base64url. */
export const EMAIL_TOKEN = /^[A-Za-z0-9_-]{43}$/;

export function newEmailToken(): { token: string; tokenHash: string } {
  const token = randomBytes(32).toString('base64url');
  return { token, tokenHash: hashEmailToken(token) };
}

export function hashEmailToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

const TOKEN = `user_id AS "userId", email, expires_at AS "expiresAt", used_at AS "usedAt"`;

/** The `email_tokens` rows (password reset and verification links), on the `Db` it is given; only hashes are stored. */
@Injectable()
export class EmailTokensRepository {
  async create(
    tx: Transaction,
    token: { tokenHash: string; purpose: EmailTokenPurpose; userId: string; email: string; createdAt: number; expiresAt: number },
  ): Promise<void> {
    await tx.rows(
      `INSERT INTO email_tokens (token_hash, purpose, user_id, email, created_at, expires_at)
       VALUES ($1, $2, $3, $4, to_timestamp($5 / 1000.0), to_timestamp($6 / 1000.0))`,
      [token.tokenHash, token.purpose, token.userId, token.email, token.createdAt, token.expiresAt],
    );
  }

  /** The token's row, read without a lock (to refuse a bad link before any work). */
  find(db: Db, purpose: EmailTokenPurpose, tokenHash: string): Promise<EmailToken | null> {
    return db.row<EmailToken>(`SELECT ${TOKEN} FROM email_tokens WHERE token_hash = $1 AND purpose = $2`, [tokenHash, purpose]);
  }

  /** The token's row, locked for the rest of the transaction (two uses of one link: one wins). */
  lock(tx: Transaction, purpose: EmailTokenPurpose, tokenHash: string): Promise<EmailToken | null> {
    return tx.row<EmailToken>(`SELECT ${TOKEN} FROM email_tokens WHERE token_hash = $1 AND purpose = $2 FOR UPDATE`, [tokenHash, purpose]);
  }

  async markUsed(tx: Transaction, tokenHash: string): Promise<void> {
    await tx.rows(`UPDATE email_tokens SET used_at = clock_timestamp() WHERE token_hash = $1`, [tokenHash]);
  }

  /** Spends every link of the user not used yet: after a reset or a takeover, a link mailed before it sets nothing. */
  async spendAllOf(tx: Transaction, userId: string): Promise<void> {
    await tx.rows(`UPDATE email_tokens SET used_at = clock_timestamp() WHERE user_id = $1 AND used_at IS NULL`, [userId]);
  }
}
