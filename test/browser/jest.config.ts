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
 * The real-browser tests (`npm run test:browser`): headless Chromium from Debian's package, driven by
 * playwright-core, against the real app. Not part of `npm test` (its config matches other files). The app
 * runs on the same template database as the e2e tier (one PostgreSQL per run, cloned per test file).
 */
const config: Config = {
  rootDir,
  testEnvironment: 'node',
  transform,
  transformIgnorePatterns,
  testMatch: ['<rootDir>/test/browser/**/*.browser-spec.ts'],
  globalSetup: '<rootDir>/test/support/global-setup.ts',
  globalTeardown: '<rootDir>/test/support/global-teardown.ts',
  testTimeout: 60_000,
};

export default config;
