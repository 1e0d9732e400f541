import { Injectable } from '@nestjs/common';
import { Role } from '../auth/roles';
import { Db, Transaction } from '../database/sql';
import { Invitation } from './people.model';

const INVITATION = `id, organization_id AS "organizationId", email, role, created_at AS "createdAt", expires_at AS "expiresAt"`;

/** An invitation as its link finds it, whatever became of it. */
export interface InvitationByToken extends Invitation {
  acceptedAt: Date | null;
  withdrawnAt: Date | null;
  /** Its link went by mail to the invited address (so whoever accepts it read that address). */
  mailed: boolean;
}

/** A pending invitation with the outbox row of the mail that carried its link (null: answered to the inviter). */
export interface InvitationWithMail extends Invitation {
  mailId: string | null;
}

/** An invitation as its page shows it before anyone accepts it: with its organization's and inviter's names. */
export interface InvitationPreview extends InvitationByToken {
  organizationName: string;
  invitedByName: string | null;
}

/** The `invitations` rows, on the `Db` it is given; only the SHA-256 of an invitation's token is stored. */
@Injectable()
export class InvitationsRepository {
  /** A new invitation; a pending one for the same email in the organization is withdrawn (its link stops working). */
  async create(
    tx: Transaction,
    invitation: { organizationId: string; email: string; role: Role; tokenHash: string; invitedBy: string; expiresAt: number },
  ): Promise<Invitation> {
    await tx.rows(
      `UPDATE invitations SET withdrawn_at = clock_timestamp()
       WHERE organization_id = $1 AND email = $2 AND accepted_at IS NULL AND withdrawn_at IS NULL`,
      [invitation.organizationId, invitation.email],
    );
    const row = await tx.row<Invitation>(
      `INSERT INTO invitations (organization_id, email, role, token_hash, invited_by, expires_at)
       VALUES ($1, $2, $3, $4, $5, to_timestamp($6 / 1000.0)) RETURNING ${INVITATION}`,
      [invitation.organizationId, invitation.email, invitation.role, invitation.tokenHash, invitation.invitedBy, invitation.expiresAt],
    );
    return row!;
  }

  /** Pending invitations (neither accepted nor withdrawn, not expired at `now`), oldest first. */
  listPending(db: Db, organizationId: string, now: number): Promise<Invitation[]> {
    return db.rows<Invitation>(
      `SELECT ${INVITATION} FROM invitations
       WHERE organization_id = $1 AND accepted_at IS NULL AND withdrawn_at IS NULL AND expires_at > to_timestamp($2 / 1000.0)
       ORDER BY created_at, id`,
      [organizationId, now],
    );
  }

  /** Withdraws a pending invitation; false when the organization has no such pending invitation. */
  async withdraw(db: Db, organizationId: string, invitationId: string): Promise<boolean> {
    const rows = await db.rows(
      `UPDATE invitations SET withdrawn_at = clock_timestamp()
       WHERE id = $1 AND organization_id = $2 AND accepted_at IS NULL AND withdrawn_at IS NULL RETURNING id`,
      [invitationId, organizationId],
    );
    return rows.length > 0;
  }

  /** The invitation of a token, locked for the rest of the transaction (two acceptances of one link: one wins). */
  lockByToken(tx: Transaction, tokenHash: string): Promise<InvitationByToken | null> {
    return tx.row<InvitationByToken>(
      `SELECT ${INVITATION}, accepted_at AS "acceptedAt", withdrawn_at AS "withdrawnAt", mail_id IS NOT NULL AS "mailed"
       FROM invitations WHERE token_hash = $1 FOR UPDATE`,
      [tokenHash],
    );
  }

  /** The invitation of a token with its organization's name and its inviter's, whatever became of it; not locked. */
  previewByToken(db: Db, tokenHash: string): Promise<InvitationPreview | null> {
    return db.row<InvitationPreview>(
      `SELECT i.id, i.organization_id AS "organizationId", i.email, i.role, i.created_at AS "createdAt", i.expires_at AS "expiresAt",
              i.accepted_at AS "acceptedAt", i.withdrawn_at AS "withdrawnAt", o.name AS "organizationName", u.name AS "invitedByName"
       FROM invitations i JOIN organizations o ON o.id = i.organization_id LEFT JOIN users u ON u.id = i.invited_by
       WHERE i.token_hash = $1`,
      [tokenHash],
    );
  }

  /** Pending invitations for an email that has not expired (single sign-on accepts them). */
  pendingFor(db: Db, email: string, now: number): Promise<Invitation[]> {
    return db.rows<Invitation>(
      `SELECT ${INVITATION} FROM invitations
       WHERE email = $1 AND accepted_at IS NULL AND withdrawn_at IS NULL AND expires_at > to_timestamp($2 / 1000.0)
       ORDER BY created_at, id`,
      [email, now],
    );
  }

  async markAccepted(tx: Transaction, invitationId: string, userId: string): Promise<void> {
    await tx.rows(`UPDATE invitations SET accepted_at = clock_timestamp(), accepted_by = $2 WHERE id = $1`, [invitationId, userId]);
  }

  /** Records the mail that carries the invitation's current link. */
  async recordMail(tx: Transaction, invitationId: string, mailId: string): Promise<void> {
    await tx.rows(`UPDATE invitations SET mail_id = $2 WHERE id = $1`, [invitationId, mailId]);
  }

  /**
   * A pending invitation (not expired at `now`) gets a new link: the old token's hash is replaced (its link stops
   * working) and it runs until `expiresAt`. Null when the organization has no such pending invitation.
   */
  renewLink(
    tx: Transaction,
    organizationId: string,
    invitationId: string,
    renewal: { tokenHash: string; now: number; expiresAt: number },
  ): Promise<Invitation | null> {
    return tx.row<Invitation>(
      `UPDATE invitations SET token_hash = $3, expires_at = to_timestamp($5 / 1000.0)
       WHERE id = $1 AND organization_id = $2 AND accepted_at IS NULL AND withdrawn_at IS NULL AND expires_at > to_timestamp($4 / 1000.0)
       RETURNING ${INVITATION}`,
      [invitationId, organizationId, renewal.tokenHash, renewal.now, renewal.expiresAt],
    );
  }

  /** As listPending, with each invitation's mail. */
  listPendingWithMail(db: Db, organizationId: string, now: number): Promise<InvitationWithMail[]> {
    return db.rows<InvitationWithMail>(
      `SELECT ${INVITATION}, mail_id AS "mailId" FROM invitations
       WHERE organization_id = $1 AND accepted_at IS NULL AND withdrawn_at IS NULL AND expires_at > to_timestamp($2 / 1000.0)
       ORDER BY created_at, id`,
      [organizationId, now],
    );
  }
}
