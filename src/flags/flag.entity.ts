import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';
import { FlagRuntime, FlagType } from '../audit/audit-action';

/**
 * The flags table, for TypeORM's metadata and CLI. The repository writes it with explicit SQL because a
 * JSON `null` value must be stored as jsonb 'null', which TypeORM would turn into SQL NULL.
 */
@Entity('flags')
export class FlagEntity {
  @PrimaryGeneratedColumn('uuid')
  id: string;

  @Column({ name: 'organization_id', type: 'uuid' })
  organizationId: string;

  @Column({ type: 'varchar', length: 64 })
  key: string;

  @Column({ type: 'varchar', length: 100 })
  name: string;

  @Column({ type: 'varchar', length: 500, nullable: true })
  description: string | null;

  @Column({ type: 'varchar', length: 16 })
  type: FlagType;

  @Column({ type: 'jsonb' })
  value: unknown;

  @Column({ type: 'varchar', length: 16 })
  runtime: FlagRuntime;

  @Column({ type: 'boolean' })
  archived: boolean;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}
