import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * With STORAGE_ENFORCE_ALLOCATION, every signed-URL request and every non-allocated upload sums the
 * organization's complete bytes (storage_items_complete_idx) and the bytes its pending items reserve. This
 * index answers the second sum from the pending items alone, however many complete files the organization has.
 */
export class StoragePendingReservations1795476523320 implements MigrationInterface {
  name = 'StoragePendingReservations1795476523320';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `CREATE INDEX storage_items_pending_organization_idx ON storage_items (organization_id)
       INCLUDE (size, upload_expires_at, upload_claimed_at) WHERE state = 'pending'`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX storage_items_pending_organization_idx`);
  }
}
