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
  /** Why the change was made, when there is something to say (a JSON object); absent or null otherwise. */
  context?: Record<string, unknown> | null;
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
  /** Null for an entry with nothing to say beyond its change. */
  context: Record<string, unknown> | null;
  createdAt: Date;
}
