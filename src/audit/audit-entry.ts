export const ACTOR_TYPES = ['session', 'apiKey', 'system'] as const;
export type ActorType = (typeof ACTOR_TYPES)[number];

/** Who made a change: an API key (by id), or the service itself (scheduled changes). */
export interface AuditActor {
  actorType: ActorType;
  actorId: string | null;
}

/** What the log is given to keep. It knows nothing of the subject's shape: `before` and `after` are JSON. */
export interface NewAuditEntry extends AuditActor {
  organizationId: string;
  /** Null once the subject no longer exists (a deletion). */
  flagId: string | null;
  flagKey: string;
  action: string;
  before: unknown;
  after: unknown;
}

export interface AuditEntry extends AuditActor {
  id: string;
  organizationId: string;
  /** Set to null by the database (ON DELETE SET NULL) when the flag is deleted. */
  flagId: string | null;
  flagKey: string | null;
  action: string;
  before: unknown;
  after: unknown;
  createdAt: Date;
}
