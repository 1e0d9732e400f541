/**
 * @jest-config-loader ts-node
 */
// Loaded through ts-node on every Node.js: Node 24 would strip the types itself and load this file as an ES module,
// where its extensionless relative imports and __dirname do not resolve.
import { resolve } from 'node:path';
import type { Config } from 'jest';
import { transform, transformIgnorePatterns } from '../../test/jest-transform';

/*
 * The TypeScript SDK's scenarios (test/fixtures/sdk/SCENARIOS.md) and shared payload fixtures against the service that
 * FLAGSTORE_URL and FLAGSTORE_KEY name: `npm run test:sdk-scenarios`, which runs it through scripts/with-flagstore.mjs
 * (a service of its own when they are not set). Inside `npm test` the same files run in the `sdk` project against the
 * app in-process.
 */
if (!process.env.FLAGSTORE_URL || !process.env.FLAGSTORE_KEY) {
  throw new Error(
    'sdk/test/scenarios.jest.config.ts needs FLAGSTORE_URL and FLAGSTORE_KEY: run `npm run test:sdk-scenarios` ' +
      '(node scripts/with-flagstore.mjs starts a service when they are not set), or set both for a running service',
  );
}

const rootDir = resolve(__dirname, '..', '..');

const config: Config = {
  rootDir,
  testEnvironment: 'node',
  transform,
  transformIgnorePatterns,
  testMatch: ['<rootDir>/sdk/test/scenarios.spec.ts', '<rootDir>/sdk/test/scenario-rate-limit.spec.ts', '<rootDir>/sdk/test/fixtures.spec.ts'],
  testTimeout: 60_000,
  // Scenario 2 waits out the service's rate-limit window (up to a minute, idle): beside the others, not after them.
  maxWorkers: 2,
};

export default config;
