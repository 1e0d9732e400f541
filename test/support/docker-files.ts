import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, posix, relative, resolve } from 'node:path';
import * as ts from 'typescript';
import { parse } from 'yaml';
import { findBinary } from './servers/binaries';

/**
 * Reading `docker/` for its tests (test/e2e/docker-*.e2e-spec.ts): there is no container engine on the machines
 * that run `npm test`, so compose.yml is parsed (as Compose reads it) and checked against the service's
 * configuration, the Dockerfile's instructions against package.json, the lockfile and the TypeScript build, and
 * what can run here runs: nginx's config in nginx, the init script on a PostgreSQL, the healthcheck commands.
 */
export const REPO = resolve(__dirname, '..', '..');
export const DOCKER_DIR = join(REPO, 'docker');

export function nginxBinary(): string | undefined {
  return findBinary('nginx', ['/usr/sbin/nginx']);
}

/* ------------------------------------------------------------------------------------------------------------
 * compose.yml
 * ---------------------------------------------------------------------------------------------------------- */

export interface ComposeHealthcheck {
  test?: string | string[];
  disable?: boolean;
  interval?: string;
  timeout?: string;
  retries?: number;
  start_period?: string;
}

export interface ComposeService {
  image?: string;
  build?: { context: string; dockerfile: string };
  environment?: Record<string, string | number | boolean | null> | string[];
  healthcheck?: ComposeHealthcheck;
  depends_on?: Record<string, { condition: string }> | string[];
  restart?: string;
  command?: string | string[];
  entrypoint?: string | string[];
  volumes?: string[];
  ports?: string[];
  stop_grace_period?: string;
}

export interface ComposeFile {
  name?: string;
  services: Record<string, ComposeService>;
  volumes?: Record<string, unknown>;
}

/** compose.yml as Compose reads it: YAML merge keys (`<<: *anchor`) resolved, `${…}` left for `interpolate`. */
export function readCompose(): ComposeFile {
  return parse(readFileSync(join(DOCKER_DIR, 'compose.yml'), 'utf8'), { merge: true }) as ComposeFile;
}

/** A service's environment as a map (Compose accepts a map or a list of `NAME=value`). */
export function environmentOf(service: ComposeService): Record<string, string> {
  const raw = service.environment ?? {};
  const entries: [string, string][] = Array.isArray(raw)
    ? raw.map((line) => {
        const at = line.indexOf('=');
        return at < 0 ? [line, ''] : [line.slice(0, at), line.slice(at + 1)];
      })
    : Object.entries(raw).map(([name, value]) => [name, value === null ? '' : String(value)]);
  return Object.fromEntries(entries);
}

export interface VariableReference {
  name: string;
  /** `:-` / `-`: the default; `:?` / `?`: required (no default). */
  operator?: ':-' | '-' | ':?' | '?';
  argument?: string;
}

const REFERENCE = /\$\$|\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:-|-|:\?|\?)([^}]*))?\}|\$([A-Za-z_][A-Za-z0-9_]*)/g;

/** The `${…}` variables a Compose value refers to (`$$` is a literal dollar sign, not a reference). */
export function referencesIn(value: string): VariableReference[] {
  const found: VariableReference[] = [];
  for (const match of value.matchAll(REFERENCE)) {
    if (match[0] === '$$') continue;
    const name = match[1] ?? match[4];
    found.push({ name, operator: match[2] as VariableReference['operator'], argument: match[3] });
  }
  return found;
}

/**
 * Compose's interpolation of one value with the given variables (the shell or env file): `${V}`, `$V`,
 * `${V:-default}` (unset or empty), `${V-default}` (unset), `${V:?message}` / `${V?message}` (an error), `$$`.
 */
export function interpolate(value: string, variables: Record<string, string | undefined>): string {
  return value.replace(REFERENCE, (whole, braced?: string, operator?: string, argument?: string, bare?: string) => {
    if (whole === '$$') return '$';
    const name = (braced ?? bare)!;
    const given = variables[name];
    switch (operator) {
      case ':-':
        return given ? given : argument!;
      case '-':
        return given !== undefined ? given : argument!;
      case ':?':
        if (!given) throw new Error(`${name}: ${argument || 'required'}`);
        return given;
      case '?':
        if (given === undefined) throw new Error(`${name}: ${argument || 'required'}`);
        return given;
      default:
        return given ?? '';
    }
  });
}

/** A service's environment after interpolation. */
export function resolvedEnvironment(service: ComposeService, variables: Record<string, string | undefined>): Record<string, string> {
  return Object.fromEntries(Object.entries(environmentOf(service)).map(([name, value]) => [name, interpolate(value, variables)]));
}

/** Every `${…}` variable the whole file refers to, with the operators it is used with. */
export function allReferences(): VariableReference[] {
  return referencesIn(readFileSync(join(DOCKER_DIR, 'compose.yml'), 'utf8').replace(/^\s*#.*$/gm, ''));
}

/* ------------------------------------------------------------------------------------------------------------
 * init-env.sh and the .env it writes
 * ---------------------------------------------------------------------------------------------------------- */

export const INIT_ENV_SCRIPT = join(DOCKER_DIR, 'init-env.sh');

/** Runs docker/init-env.sh as a user would (`sh`, no Node), writing `target`; its stdout. */
export function runInitEnv(target: string): string {
  return execFileSync('sh', [INIT_ENV_SCRIPT, target], { encoding: 'utf8', env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } });
}

/** A .env file as Compose reads it: `NAME=value` lines; blank lines and `#` comments skipped; quotes kept. */
export function parseEnvFile(text: string): Record<string, string> {
  const entries = text
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.trimStart().startsWith('#'))
    .map((line): [string, string] => {
      const at = line.indexOf('=');
      if (at < 0) throw new Error(`not NAME=value: ${line}`);
      return [line.slice(0, at).trim(), line.slice(at + 1)];
    });
  return Object.fromEntries(entries);
}

/** The variables a fresh `docker/init-env.sh` writes (into a directory of its own, removed afterwards). */
export function initEnvVariables(): Record<string, string> {
  const dir = mkdtempSync(join(tmpdir(), 'flagstore-init-env-'));
  try {
    const target = join(dir, '.env');
    runInitEnv(target);
    return parseEnvFile(readFileSync(target, 'utf8'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/* ------------------------------------------------------------------------------------------------------------
 * nginx.conf
 * ---------------------------------------------------------------------------------------------------------- */

/** The `server host:port` lines of an `upstream name { … }` block. */
export function upstreamServers(conf: string, upstream: string): { host: string; port: number }[] {
  const block = new RegExp(`upstream\\s+${upstream}\\s*\\{([^}]*)\\}`).exec(conf);
  if (!block) throw new Error(`no upstream ${upstream} in nginx.conf`);
  return [...block[1].replace(/#.*$/gm, '').matchAll(/^\s*server\s+([^:\s;]+):(\d+)[^;]*;/gm)].map((m) => ({ host: m[1], port: Number(m[2]) }));
}

/* ------------------------------------------------------------------------------------------------------------
 * Dockerfile
 * ---------------------------------------------------------------------------------------------------------- */

export interface DockerInstruction {
  keyword: string;
  /** The arguments as written (continuation lines joined). */
  args: string;
}

export interface DockerStage {
  from: string;
  name?: string;
  instructions: DockerInstruction[];
}

/** The Dockerfile as stages of instructions (comments dropped, `\` continuations joined); ARGs before FROM apply. */
export function readDockerfile(): { args: Record<string, string>; stages: DockerStage[] } {
  const text = readFileSync(join(DOCKER_DIR, 'Dockerfile'), 'utf8');
  const logical: string[] = [];
  let current = '';
  for (const line of text.split('\n')) {
    if (/^\s*#/.test(line)) continue;
    if (line.endsWith('\\')) {
      current += `${line.slice(0, -1)} `;
      continue;
    }
    current += line;
    if (current.trim()) logical.push(current.trim());
    current = '';
  }
  const args: Record<string, string> = {};
  const stages: DockerStage[] = [];
  for (const line of logical) {
    const space = line.search(/\s/);
    const keyword = line.slice(0, space).toUpperCase();
    const rest = line
      .slice(space + 1)
      .trim()
      .replace(/\s+/g, ' ');
    if (keyword === 'FROM') {
      const [image, as, name] = rest.split(' ');
      const from = image.replace(/\$\{(\w+)\}/g, (_, arg: string) => args[arg] ?? '');
      stages.push({ from, name: as?.toUpperCase() === 'AS' ? name : undefined, instructions: [] });
    } else if (stages.length === 0) {
      if (keyword === 'ARG') {
        const [name, value] = rest.split('=');
        args[name] = value ?? '';
      }
    } else {
      stages[stages.length - 1].instructions.push({ keyword, args: rest });
    }
  }
  return { args, stages };
}

/** The JSON (exec) form of CMD / HEALTHCHECK CMD, parsed; undefined for the shell form. */
export function execForm(args: string): string[] | undefined {
  const at = args.indexOf('[');
  if (at < 0) return undefined;
  try {
    const parsed: unknown = JSON.parse(args.slice(at));
    return Array.isArray(parsed) && parsed.every((part) => typeof part === 'string') ? (parsed as string[]) : undefined;
  } catch {
    return undefined;
  }
}

/** The stage's working directory at the instruction `before` (default: at its end); `/` when it sets none. */
export function workdirOf(stage: DockerStage, before = stage.instructions.length): string {
  let dir = '/';
  for (const instruction of stage.instructions.slice(0, before)) {
    if (instruction.keyword === 'WORKDIR') dir = posix.resolve(dir, instruction.args);
  }
  return dir;
}

/** `COPY [--from=…] src… dest`: the sources, the destination (resolved against WORKDIR) and the stage it copies from. */
export function copiesOf(stage: DockerStage): { index: number; from?: string; sources: string[]; destination: string }[] {
  return stage.instructions.flatMap((instruction, index) => {
    if (instruction.keyword !== 'COPY') return [];
    const words = instruction.args.split(' ');
    const flags = words.filter((word) => word.startsWith('--'));
    const paths = words.filter((word) => !word.startsWith('--'));
    const from = flags.find((flag) => flag.startsWith('--from='))?.slice('--from='.length);
    const destination = posix.resolve(workdirOf(stage, index), paths[paths.length - 1]);
    return [{ index, from, sources: paths.slice(0, -1), destination }];
  });
}

/**
 * What `tsc -p <tsconfig>` emits for `source` (both paths from the repository root), as TypeScript itself
 * computes it from the config (rootDir, outDir, extends), relative to the root; undefined when the config does
 * not compile that file.
 */
export function emittedJavaScript(tsconfig: string, source: string): string | undefined {
  const configPath = join(REPO, tsconfig);
  const read = ts.readConfigFile(configPath, (path) => ts.sys.readFile(path));
  if (read.error) throw new Error(`${tsconfig}: ${ts.flattenDiagnosticMessageText(read.error.messageText, '\n')}`);
  const parsed = ts.parseJsonConfigFileContent(read.config, ts.sys, dirname(configPath), undefined, configPath);
  const file = join(REPO, source);
  if (!parsed.fileNames.map((name) => resolve(name)).includes(file)) return undefined;
  const js = ts.getOutputFileNames(parsed, file, false).find((output) => output.endsWith('.js'));
  return js === undefined ? undefined : relative(REPO, js);
}
