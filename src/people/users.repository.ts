import { Injectable } from '@nestjs/common';
import { containsPattern } from '../common/like-pattern';
import { pagedRows } from '../database/paged-rows';
import { Db, isUniqueViolation, Transaction } from '../database/sql';
import { User, UserOrganization, UserWithPassword } from './people.model';

const USER = `id, email, name, created_at AS "createdAt", email_verified_at IS NOT NULL AS "emailVerified", review_mail AS "reviewMail"`;
export const USER_EMAIL_KEY = 'users_email_key';

/** The `users` rows, on the `Db` it is given. A deleted user keeps their row (marked) so that history can name them. */
@Injectable()
export class UsersRepository {
  /**
   * The new user, or null when a user with that email (emails are in their normal form: email-address.ts) exists. `emailVerified`: the operator made them,
   * or a single sign-on provider vouched for the email; not when whoever held an invitation's link chose the password.
   */
  async create(db: Db, email: string, name: string, passwordHash: string | null, emailVerified: boolean): Promise<User | null> {
    try {
      return await db.row<User>(
        `INSERT INTO users (email, name, password_hash, email_verified_at) VALUES ($1, $2, $3, CASE WHEN $4::boolean THEN clock_timestamp() END)
         RETURNING ${USER}`,
        [email, name, passwordHash, emailVerified],
      );
    } catch (error) {
      if (isUniqueViolation(error, USER_EMAIL_KEY)) return null;
      throw error;
    }
  }

  find(db: Db, userId: string): Promise<User | null> {
    return db.row<User>(`SELECT ${USER} FROM users WHERE id = $1 AND deleted_at IS NULL`, [userId]);
  }

  findByEmail(db: Db, email: string): Promise<UserWithPassword | null> {
    return db.row<UserWithPassword>(`SELECT ${USER}, password_hash AS "passwordHash" FROM users WHERE email = $1 AND deleted_at IS NULL`, [email]);
  }

  findWithPassword(db: Db, userId: string): Promise<UserWithPassword | null> {
    return db.row<UserWithPassword>(`SELECT ${USER}, password_hash AS "passwordHash" FROM users WHERE id = $1 AND deleted_at IS NULL`, [userId]);
  }

  /** Locks the user's row for the rest of the transaction; null when there is no such user. */
  lock(tx: Transaction, userId: string): Promise<User | null> {
    return tx.row<User>(`SELECT ${USER} FROM users WHERE id = $1 AND deleted_at IS NULL FOR UPDATE`, [userId]);
  }

  /** A page of users, newest first; `search` is a case-insensitive substring of the email or name, taken literally. */
  list(db: Db, filter: { search?: string; offset: number; limit: number }): Promise<{ rows: User[]; total: number }> {
    const parameters: unknown[] = [];
    let where = 'deleted_at IS NULL';
    if (filter.search) {
      parameters.push(containsPattern(filter.search));
      where += ' AND (email ILIKE $1 OR name ILIKE $1)';
    }
    return pagedRows<User>(db, { columns: USER, table: 'users', where, parameters, offset: filter.offset, limit: filter.limit });
  }

  async setPassword(db: Db, userId: string, passwordHash: string): Promise<void> {
    await db.rows(`UPDATE users SET password_hash = $2, changed_xid = pg_current_xact_id() WHERE id = $1 AND deleted_at IS NULL`, [
      userId,
      passwordHash,
    ]);
  }

  /** Marks the user's email verified (kept as it was when it already is); null when there is no such user. */
  markEmailVerified(db: Db, userId: string): Promise<User | null> {
    return db.row<User>(
      `UPDATE users SET email_verified_at = coalesce(email_verified_at, clock_timestamp()) WHERE id = $1 AND deleted_at IS NULL RETURNING ${USER}`,
      [userId],
    );
  }

  /** Whether the user is mailed about change requests; null when there is no such user. */
  setReviewMail(db: Db, userId: string, reviewMail: boolean): Promise<User | null> {
    return db.row<User>(`UPDATE users SET review_mail = $2 WHERE id = $1 AND deleted_at IS NULL RETURNING ${USER}`, [userId, reviewMail]);
  }

  /**
   * Single sign-on takes an unverified account over: its password goes (whoever chose it cannot sign in with it) and
   * its email is verified. Ending its sessions is the caller's part.
   */
  async takeOver(tx: Transaction, userId: string): Promise<void> {
    await tx.rows(
      `UPDATE users SET password_hash = NULL, email_verified_at = coalesce(email_verified_at, clock_timestamp()), changed_xid = pg_current_xact_id()
       WHERE id = $1 AND deleted_at IS NULL`,
      [userId],
    );
  }

  async markDeleted(tx: Transaction, userId: string): Promise<void> {
    await tx.rows(`UPDATE users SET deleted_at = clock_timestamp(), changed_xid = pg_current_xact_id() WHERE id = $1`, [userId]);
  }

  /** The user's organizations with their role, by name. */
  organizationsOf(db: Db, userId: string): Promise<UserOrganization[]> {
    return db.rows<UserOrganization>(
      `SELECT o.id, o.name, m.role FROM memberships m JOIN organizations o ON o.id = m.organization_id
       WHERE m.user_id = $1 AND m.left_at IS NULL ORDER BY o.name, o.id`,
      [userId],
    );
  }
}
