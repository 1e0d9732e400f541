import { Injectable } from '@nestjs/common';
import { TransactionHost } from '@nestjs-cls/transactional';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { AuditAction, FlagSnapshot } from './audit-action';
import { ActorType, AuditEntryEntity } from './audit-entry.entity';

export interface NewAuditEntry {
  organizationId: string;
  flagId: string | null;
  flagKey: string;
  actorType: ActorType;
  actorId: string | null;
  action: AuditAction;
  before: FlagSnapshot | null;
  after: FlagSnapshot | null;
}

/** Inserts and reads only: the table refuses updates and deletes (see the Init migration's trigger). */
@Injectable()
export class AuditRepository {
  constructor(private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>) {}

  async insert(entries: NewAuditEntry[]): Promise<void> {
    for (const entry of entries) {
      await this.txHost.tx.query(
        `INSERT INTO flag_audit_entries (organization_id, flag_id, flag_key, actor_type, actor_id, action, before, after)
         VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8::jsonb)`,
        [
          entry.organizationId,
          entry.flagId,
          entry.flagKey,
          entry.actorType,
          entry.actorId,
          entry.action,
          entry.before === null ? null : JSON.stringify(entry.before),
          entry.after === null ? null : JSON.stringify(entry.after),
        ],
      );
    }
  }

  async list(
    organizationId: string,
    filter: { flagId?: string; offset: number; limit: number },
  ): Promise<{ entries: AuditEntryEntity[]; total: number }> {
    const where: Record<string, unknown> = { organizationId };
    if (filter.flagId) where.flagId = filter.flagId;
    const [entries, total] = await this.txHost.tx.findAndCount(AuditEntryEntity, {
      where,
      order: { createdAt: 'DESC', id: 'DESC' },
      skip: filter.offset,
      take: filter.limit,
    });
    return { entries, total };
  }
}
