import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A studio's own deployment (decisions.md, "File names"): an upload may name its file. The name has a column of its
 * own, never a key of the spec's `metadata` (whose limits and read-back stay exact); NULL for a file without one,
 * which every file stored before this migration is. The schema holds the API's rule: 1-255 characters (code points),
 * no `/`, no `\`, no control character (C0, DEL, C1).
 */
export class StorageFileNames1796700000000 implements MigrationInterface {
  name = 'StorageFileNames1796700000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(
      `ALTER TABLE storage_items ADD COLUMN file_name text
         CONSTRAINT storage_items_file_name_valid
         CHECK (file_name IS NULL OR (char_length(file_name) BETWEEN 1 AND 255 AND file_name !~ '[/\\\\\\u0001-\\u001f\\u007f-\\u009f]'))`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE storage_items DROP COLUMN file_name`);
  }
}
