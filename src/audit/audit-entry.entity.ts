import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';
import { AuditAction, FlagSnapshot } from './audit-action';

export type ActorType = 'session' | 'apiKey' | 'system';

@Entity('flag_audit_entries')
export class AuditEntryEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'organization_id', type: 'uuid' })
  organizationId: string;

  /** Set to null by the database (ON DELETE SET NULL) when the flag is deleted. */
  @Column({ name: 'flag_id', type: 'uuid', nullable: true })
  flagId: string | null;

  @Column({ name: 'flag_key', type: 'varchar', length: 64, nullable: true })
  flagKey: string | null;

  @Column({ name: 'actor_type', type: 'varchar', length: 16 })
  actorType: ActorType;

  @Column({ name: 'actor_id', type: 'varchar', length: 100, nullable: true })
  actorId: string | null;

  @Column({ type: 'varchar', length: 32 })
  action: AuditAction;

  @Column({ type: 'jsonb', nullable: true })
  before: FlagSnapshot | null;

  @Column({ type: 'jsonb', nullable: true })
  after: FlagSnapshot | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;
}
