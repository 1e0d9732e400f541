// Data source for the TypeORM CLI (`npm run typeorm -- migration:create migrations/<Name>`, `migration:show`).
// The service itself migrates at boot (src/database/data-source-options.ts).
import 'reflect-metadata';
import { DataSource } from 'typeorm';
import { dataSourceOptions } from './src/database/data-source-options';

const databaseUrl = process.env.DATABASE_URL;
if (!databaseUrl) {
  throw new Error('DATABASE_URL must be set to use the TypeORM CLI');
}

export default new DataSource(dataSourceOptions(databaseUrl));
