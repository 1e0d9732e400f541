import { useEffect, useState } from 'react';
import { api, ok } from '../api/client';

/** Who made a change, as history shows it: the member's name, the key's name, or "system" (a schedule). */
export interface Actors {
  name(actorType: string, actorId: string | null): string;
}

/**
 * The organization's members (former ones too, so old entries keep their names) and API keys (revoked ones too),
 * read once per page.
 */
export function useActors(organizationId: string | undefined): Actors {
  const [names, setNames] = useState<Map<string, string>>(new Map());
  useEffect(() => {
    if (!organizationId) return;
    Promise.all([
      ok(api.GET('/v1/organization/members', { params: { query: { former: 'true' } } })).catch(() => ({ members: [], former: [] })),
      ok(api.GET('/v1/organization/api-keys')).catch(() => []),
    ]).then(([members, keys]) => {
      const next = new Map<string, string>();
      for (const member of members.members) next.set(`session:${member.userId}`, member.name);
      for (const former of members.former ?? []) next.set(`session:${former.userId}`, `${former.name} (former member)`);
      for (const key of keys) next.set(`apiKey:${key.id}`, `key “${key.name}”${key.revokedAt ? ' (revoked)' : ''}`);
      setNames(next);
    });
  }, [organizationId]);
  return {
    name(actorType, actorId) {
      if (actorType === 'system') return 'system';
      return names.get(`${actorType}:${actorId}`) ?? (actorType === 'apiKey' ? 'an API key' : 'a member');
    },
  };
}
