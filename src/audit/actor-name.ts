import { Db } from '../database/sql';
import { ActorType } from './audit-entry';

/**
 * The name of who acted, as a change request's timeline and a webhook event show it: a person's name, or an API key's
 * (only a key of `organizationId`); null for the service itself, or one that is gone.
 */
export async function actorName(db: Db, organizationId: string, type: ActorType, id: string | null): Promise<string | null> {
  if (id === null || type === 'system') return null;
  const row =
    type === 'session'
      ? await db.row<{ name: string }>(`SELECT name FROM users WHERE id = $1`, [id])
      : await db.row<{ name: string }>(`SELECT name FROM api_keys WHERE id = $1 AND organization_id = $2`, [id, organizationId]);
  return row?.name ?? null;
}
