/**
 * @jest-config-loader ts-node
 */
// Loaded through ts-node on every Node.js: Node 24 would strip the types itself and load this file as an ES module,
// where its extensionless relative imports and __dirname do not resolve.
import { resolve } from 'node:path';
import type { Config } from 'jest';
import { transform, transformIgnorePatterns } from '../jest-transform';

const rootDir = resolve(__dirname, '..', '..');

/**
 * The topology test (`npm run test:topology`): the built service as three processes behind nginx, on a
 * PostgreSQL, Redis and s3rver of the test's own. Not part of `npm test` (its config matches other files).
 * Each hook and test has its own timeout (see the spec); together they stay under 10 minutes.
 */
const config: Config = {
  rootDir,
  testEnvironment: 'node',
  transform,
  transformIgnorePatterns,
  testMatch: ['<rootDir>/test/topology/**/*.topology-spec.ts'],
  testTimeout: 120_000,
};

export default config;
