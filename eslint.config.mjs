// Lint: typescript-eslint's recommended rules over the service, its tests, the SDK and the bench; layout is
// Prettier's (.prettierrc.json), so eslint-config-prettier turns off every rule about it. Layering is not here:
// .dependency-cruiser.cjs states it (npm run lint:deps).
import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'dist/**',
      'data/**',
      'node_modules/**',
      'sdk/dist/**',
      'coverage/**',
      'console/.generated/**',
      'artifacts/**',
      'build/**',
      'sdk-csharp/build/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  prettier,
  {
    languageOptions: { ecmaVersion: 2023, sourceType: 'module' },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      // NUL and lone surrogates are matched on purpose: PostgreSQL cannot store them, so input is checked for them.
      'no-control-regex': 'off',
    },
  },
  {
    // Tests read JSON bodies of any shape, and load some modules only where a test needs them.
    files: ['test/**/*.ts', 'sdk/test/**/*.ts', 'src/**/*.spec.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off', '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    files: ['bench/**/*.js', '**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: globals.node },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    // The console's build script runs in Node; its app runs in the browser.
    files: ['console/*.mjs'],
    languageOptions: { globals: globals.node },
  },
  {
    files: ['console/src/**/*.{ts,tsx}'],
    languageOptions: { globals: globals.browser },
  },
  {
    // The pages the browser tests serve run in Chromium.
    files: ['test/browser/page/**/*.js'],
    languageOptions: { globals: globals.browser },
  },
);
