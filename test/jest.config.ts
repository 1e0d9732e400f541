/**
 * @jest-config-loader ts-node
 */
// Loaded through ts-node on every Node.js: Node 24 would strip the types itself and load this file as an ES module,
// where its extensionless relative imports and __dirname do not resolve.
import { availableParallelism } from 'node:os';
import { resolve } from 'node:path';
import type { Config } from 'jest';
import { transform, transformIgnorePatterns } from './jest-transform';

const rootDir = resolve(__dirname, '..');

const config: Config = {
  rootDir,
  testTimeout: 60_000,
  // Test files spend much of their time waiting on PostgreSQL (a process of its own) and on sockets: a worker per core
  // and one more keeps both cores busy (on 2 cores: 3 workers, 220 s where jest's default of one worker took 515 s).
  maxWorkers: availableParallelism() + 1,
  projects: [
    {
      displayName: 'unit',
      rootDir,
      testEnvironment: 'node',
      transform,
      transformIgnorePatterns,
      // The console's logic (console/src) is tested here too; its pages are tested in Chromium (npm run test:browser).
      testMatch: ['<rootDir>/src/**/*.spec.ts', '<rootDir>/console/src/**/*.spec.ts'],
    },
    {
      displayName: 'e2e',
      rootDir,
      testEnvironment: 'node',
      transform,
      transformIgnorePatterns,
      // e2e: the real app over HTTP; service: the services on the same real database, without HTTP.
      testMatch: ['<rootDir>/test/e2e/**/*.e2e-spec.ts', '<rootDir>/test/service/**/*.service-spec.ts'],
      setupFilesAfterEnv: ['<rootDir>/test/support/contract-check.ts'],
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
    },
    {
      // The game-server SDK (sdk/, its own package) against the real app in-process, plus its build.
      displayName: 'sdk',
      rootDir,
      testEnvironment: 'node',
      transform,
      transformIgnorePatterns,
      testMatch: ['<rootDir>/sdk/test/**/*.spec.ts'],
      setupFilesAfterEnv: ['<rootDir>/test/support/contract-check.ts'],
      globalSetup: '<rootDir>/test/support/global-setup.ts',
      globalTeardown: '<rootDir>/test/support/global-teardown.ts',
    },
  ],
};

export default config;
