import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve, sep } from 'node:path';

/**
 * npm packages served to the test page as they are installed, without a bundler: each package's ESM build is
 * served from node_modules under `/modules/<name>/`, and an import map (https://html.spec.whatwg.org/#import-maps)
 * tells the browser where each bare specifier (`@openfeature/web-sdk`) lives.
 *
 * Which packages that takes is found, not listed: starting from the specifiers the page imports, every bare
 * import of every served file is resolved as Node resolves it from the importing package (so the provider's own
 * nested `@openfeature/ofrep-core` 2.x is served, not the 0.x installed at the top for the Node provider), and
 * followed in turn. A package that brings an import nobody can serve (a CommonJS-only dependency, a Node
 * built-in) fails here, naming it, instead of as a module that silently does not load in the page.
 */
export interface EsmModules {
  /** The `<script type="importmap">` JSON. */
  importMap: { imports: Record<string, string> };
  /** The file for a `/modules/...` path, or undefined when the path is not inside a served package. */
  fileFor(urlPath: string): string | undefined;
}

export const MODULES_PREFIX = '/modules/';

const REPO_ROOT = resolve(__dirname, '..', '..', '..');

/**
 * Static imports and exports (`import x from 'a'`, `export * from 'a'`, `import 'a'`) and literal dynamic
 * imports. The builds served are unminified output of tsc and esbuild, which this reads reliably.
 */
const IMPORT_SPECIFIERS = /\bfrom\s*(["'])([^"'\n]+)\1|\bimport\s*(["'])([^"'\n]+)\3|\bimport\(\s*(["'])([^"'\n]+)\5\s*\)/g;

interface Package {
  name: string;
  version: string;
  dir: string;
  entry: string;
}

export function esmModules(specifiers: string[]): EsmModules {
  const byDir = new Map<string, Package>();
  const mapped = new Map<string, Package>();
  const pending: Array<{ specifier: string; from: string; importer: string }> = specifiers.map((specifier) => ({
    specifier,
    from: REPO_ROOT,
    importer: 'the test page',
  }));
  while (pending.length > 0) {
    const { specifier, from, importer } = pending.shift()!;
    const found = packageOf(specifier, from, importer);
    const already = mapped.get(specifier);
    if (already && already.dir !== found.dir) {
      // One import map entry per specifier: two versions in one page would need the map's `scopes`.
      throw new Error(
        `${specifier} resolves to ${already.dir} (${already.version}) for one served module and to ${found.dir} ` +
          `(${found.version}) for ${importer}: the test page's import map holds one of each; add a scope for the other`,
      );
    }
    mapped.set(specifier, found);
    if (byDir.has(found.dir)) continue;
    byDir.set(found.dir, found);
    for (const file of moduleGraph(found)) {
      for (const bare of bareImportsOf(file))
        pending.push({ specifier: bare, from: found.dir, importer: `${found.name}/${relative(found.dir, file)}` });
    }
  }

  const served = [...byDir.values()];
  const urlOf = (pkg: Package) => `${MODULES_PREFIX}${pkg.name}@${pkg.version}/`;
  return {
    importMap: { imports: Object.fromEntries([...mapped].map(([specifier, pkg]) => [specifier, `${urlOf(pkg)}${pkg.entry}`])) },
    fileFor(urlPath) {
      const pkg = served.find((candidate) => urlPath.startsWith(urlOf(candidate)));
      if (!pkg) return undefined;
      let file: string;
      try {
        file = resolve(pkg.dir, decodeURIComponent(urlPath.slice(urlOf(pkg).length)));
      } catch {
        return undefined; // a malformed %-escape
      }
      return file.startsWith(pkg.dir + sep) && existsSync(file) && statSync(file).isFile() ? file : undefined;
    },
  };
}

/** The package a bare specifier names, found the way Node looks it up from `from`, with its browser ESM entry. */
function packageOf(specifier: string, from: string, importer: string): Package {
  if (specifier.startsWith('node:')) throw new Error(`${importer} imports the Node built-in ${specifier}, which no browser has`);
  const name = specifier.startsWith('@') ? specifier.split('/').slice(0, 2).join('/') : specifier.split('/')[0];
  if (name !== specifier) throw new Error(`${importer} imports the subpath ${specifier}; the test page's import map only maps package entries`);
  const lookup = createRequire(join(from, 'noop.js')).resolve.paths(name) ?? [];
  const dir = lookup.map((folder) => join(folder, name)).find((candidate) => existsSync(join(candidate, 'package.json')));
  if (!dir) throw new Error(`${importer} imports ${specifier}, which is not installed (looked in ${lookup.slice(0, 3).join(', ')}, ...)`);
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  const entry = esmEntryOf(manifest);
  if (!entry) {
    throw new Error(`${importer} imports ${specifier} (${dir}), which has no ESM build ("module", or an "import" export) the browser could load`);
  }
  return { name, version: manifest.version, dir: realpathSync(dir), entry: entry.replace(/^\.\//, '') };
}

/**
 * The browser ESM file: `module` (the bundlers' field; OpenFeature's Nx-built packages point their `import`
 * condition at a CommonJS wrapper, `index.cjs.mjs`, and `module` at the real ESM build), else the `import`
 * condition of the root export.
 */
function esmEntryOf(manifest: { module?: unknown; exports?: unknown }): string | undefined {
  if (typeof manifest.module === 'string') return manifest.module;
  const exports = manifest.exports as Record<string, unknown> | undefined;
  const root = (exports && typeof exports === 'object' && '.' in exports ? exports['.'] : exports) as Record<string, unknown> | undefined;
  return root && typeof root.import === 'string' ? root.import : undefined;
}

/** The package's entry and every file it reaches by relative imports. */
function moduleGraph(pkg: Package): string[] {
  const seen = new Set<string>();
  const pending = [join(pkg.dir, pkg.entry)];
  while (pending.length > 0) {
    const file = pending.pop()!;
    if (seen.has(file)) continue;
    if (!existsSync(file)) throw new Error(`${pkg.name}@${pkg.version}: ${relative(pkg.dir, file)} is imported but missing`);
    seen.add(file);
    for (const specifier of importsOf(file)) {
      if (specifier.startsWith('./') || specifier.startsWith('../')) pending.push(resolve(dirname(file), specifier));
    }
  }
  return [...seen];
}

/** Imports the browser resolves through the import map: not relative, not absolute, not a URL (`node:` is reported). */
function bareImportsOf(file: string): string[] {
  const isPath = (specifier: string) => /^\.{0,2}\//.test(specifier);
  const isUrl = (specifier: string) => /^[a-z][a-z0-9+.-]*:/i.test(specifier) && !specifier.startsWith('node:');
  return importsOf(file).filter((specifier) => !isPath(specifier) && !isUrl(specifier));
}

function importsOf(file: string): string[] {
  const source = readFileSync(file, 'utf8');
  return [...source.matchAll(IMPORT_SPECIFIERS)].map((match) => match[2] ?? match[4] ?? match[6]);
}
