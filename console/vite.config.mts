import { resolve } from 'node:path';
import { defineConfig } from 'vite';

/**
 * The console's bundle, served by the service under /console (src/console/console-assets.ts): hashed asset names
 * (cached for a year), no inline script (the CSP is `script-src 'self'`), into dist/public/console.
 */
export default defineConfig({
  root: import.meta.dirname,
  base: '/console/',
  publicDir: false,
  build: {
    outDir: resolve(import.meta.dirname, '..', 'dist', 'public', 'console'),
    emptyOutDir: true,
    target: 'es2022',
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    sourcemap: false,
    reportCompressedSize: false,
  },
  oxc: { jsx: { runtime: 'automatic' } },
});
