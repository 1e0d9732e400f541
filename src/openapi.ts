import 'reflect-metadata';
import { writeFileSync } from 'node:fs';
import { previewOpenApiDocument } from './app/openapi-preview';
import { loadConfig } from './config/app-config';

/**
 * `node dist/openapi.js <file>`: writes the service's OpenAPI document (what GET /docs-json serves) with no database
 * and no server. The console's build generates its API client from it (console/build.mjs).
 */
async function main(): Promise<void> {
  const [file] = process.argv.slice(2);
  if (!file) throw new Error('usage: node dist/openapi.js <file>');
  writeFileSync(file, `${JSON.stringify(await previewOpenApiDocument(loadConfig(process.env)), null, 2)}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`openapi: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
