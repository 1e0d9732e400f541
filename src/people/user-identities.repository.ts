import { Injectable } from '@nestjs/common';
import { Db, isUniqueViolation, Transaction } from '../database/sql';
import { UserIdentity } from './people.model';

/**
 * The `user_identities` rows: a single sign-on identity (the provider's `iss` and `sub`) linked to the user it signs
 * into, whatever email the provider sends later. A user has at most one identity per provider.
 */
@Injectable()
export class UserIdentitiesRepository {
  /** The user (not deleted) that the identity is linked to, or null. */
  async userOf(db: Db, identity: UserIdentity): Promise<string | null> {
    const row = await db.row<{ userId: string }>(
      `SELECT i.user_id AS "userId" FROM user_identities i JOIN users u ON u.id = i.user_id AND u.deleted_at IS NULL
       WHERE i.issuer = $1 AND i.subject = $2`,
      [identity.issuer, identity.subject],
    );
    return row?.userId ?? null;
  }

  /** The subject the user is linked to at the provider, or null. */
  async subjectOf(db: Db, userId: string, issuer: string): Promise<string | null> {
    const row = await db.row<{ subject: string }>(`SELECT subject FROM user_identities WHERE user_id = $1 AND issuer = $2`, [userId, issuer]);
    return row?.subject ?? null;
  }

  /**
   * Links the identity to the user. An identity still linked to a deleted user is linked anew. False when another
   * sign-in linked it (or the user) meanwhile.
   */
  async link(tx: Transaction, identity: UserIdentity, userId: string): Promise<boolean> {
    try {
      const rows = await tx.rows(
        `INSERT INTO user_identities (issuer, subject, user_id) VALUES ($1, $2, $3)
         ON CONFLICT (issuer, subject) DO UPDATE SET user_id = EXCLUDED.user_id, created_at = clock_timestamp()
           WHERE EXISTS (SELECT 1 FROM users u WHERE u.id = user_identities.user_id AND u.deleted_at IS NOT NULL)
         RETURNING user_id`,
        [identity.issuer, identity.subject, userId],
      );
      return rows.length > 0;
    } catch (error) {
      if (isUniqueViolation(error, 'user_identities_one_per_issuer')) return false;
      throw error;
    }
  }
}
