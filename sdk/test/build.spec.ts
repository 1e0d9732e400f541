import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildSdk, sdkRoot, typescript } from './support/typescript';

describe('the SDK package', () => {
  const packageJson = JSON.parse(readFileSync(join(sdkRoot, 'package.json'), 'utf8'));
  let outDir: string;
  let buildOutput: string;
  beforeAll(async () => {
    outDir = mkdtempSync(join(tmpdir(), 'flagstore-sdk-build-'));
    buildOutput = await buildSdk(outDir).catch((error: Error) => error.message);
  }, 60_000);
  afterAll(() => rmSync(outDir, { recursive: true, force: true }));

  it('builds with tsc -p sdk/tsconfig.json, into the files package.json names, with declarations', () => {
    expect(buildOutput).toBe('');

    expect(packageJson.main).toBe('dist/index.js');
    expect(packageJson.types).toBe('dist/index.d.ts');
    expect(existsSync(join(outDir, 'index.js'))).toBe(true);
    expect(existsSync(join(outDir, 'index.d.ts'))).toBe(true);
    const built = require(join(outDir, 'index.js'));
    expect(Object.keys(built).sort()).toEqual(['FlagstoreClient', 'FlagstoreError', 'systemScheduler']);
    expect(readFileSync(join(outDir, 'client.d.ts'), 'utf8')).toMatch(
      /getNumber\(key: string, fallback: number, context\?: EvaluationContext\): number;/,
    );
  });

  it('has no runtime dependency: package.json declares none, and the built code requires only Node built-ins and itself', () => {
    for (const field of ['dependencies', 'peerDependencies', 'optionalDependencies', 'bundleDependencies']) {
      expect(packageJson).not.toHaveProperty(field);
    }
    expect(packageJson).toMatchObject({
      name: '@flagstore/sdk',
      version: '0.1.0',
      engines: { node: '>=20' },
      scripts: { build: 'tsc -p tsconfig.json' },
    });

    const required = readdirSync(outDir)
      .filter((file) => file.endsWith('.js'))
      .flatMap((file) => [...readFileSync(join(outDir, file), 'utf8').matchAll(/require\("([^"]+)"\)/g)].map((match) => match[1]));
    expect(required.length).toBeGreaterThan(0);
    for (const name of required) {
      const builtin = name.startsWith('node:') && builtinModules.includes(name.slice('node:'.length));
      expect({ name, allowed: builtin || name.startsWith('./') }).toEqual({ name, allowed: true });
    }
  });

  it('type-checks its tests too (ts-jest only transpiles them)', async () => {
    expect(await typescript('-p', 'sdk/test/tsconfig.json')).toBe('');
  }, 120_000);
});
