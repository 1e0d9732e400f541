import { accessSync, constants, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig, MIN_SECRET_LENGTH } from '../../src/config/app-config';
import {
  allReferences,
  ComposeService,
  DOCKER_DIR,
  environmentOf,
  INIT_ENV_SCRIPT,
  initEnvVariables,
  parseEnvFile,
  readCompose,
  resolvedEnvironment,
  runInitEnv,
  upstreamServers,
} from '../support/docker-files';

/**
 * docker/compose.yml, checked against the service's configuration (src/config/app-config.ts) without a container
 * engine: its services, the environment each instance gets (as loadConfig reads it), healthchecks, dependencies,
 * and the names nginx.conf and the database init script rely on.
 */
const compose = readCompose();
const services = compose.services;
const INSTANCES = ['flagstore-1', 'flagstore-2'];
const nginxConf = readFileSync(join(DOCKER_DIR, 'nginx.conf'), 'utf8');

/** Every variable the file refers to, set to a sample of its own (secrets long enough, passwords URL-safe). */
function sampleVariables(): Record<string, string> {
  const names = [...new Set(allReferences().map((reference) => reference.name))];
  return Object.fromEntries(
    names.map((name) => {
      if (name === 'PUBLIC_URL') return [name, 'https://flags.example.com'];
      if (name === 'FLAGSTORE_HTTP_PORT') return [name, '9090'];
      if (name === 'LOG_LEVEL') return [name, 'debug'];
      if (name === 'S3_BUCKET') return [name, 'studio-files'];
      return [name, `sample-${name.toLowerCase().replace(/_/g, '-')}-0123456789abcdef0123456789`];
    }),
  );
}

/** What `docker/init-env.sh` writes: the documented first start runs compose with these variables and no others. */
const GENERATED = initEnvVariables();

/** The two settings of the environment compose is run with: docker/init-env.sh's .env, and every variable set. */
const SETTINGS: [string, Record<string, string>][] = [
  ['the .env docker/init-env.sh writes', GENERATED],
  ['every variable set', sampleVariables()],
];

/** The variables that hold a credential: none may have a default. */
const CREDENTIALS = [
  'ADMIN_TOKEN',
  'UPLOAD_SIGNING_SECRET',
  'POSTGRES_PASSWORD',
  'FLAGSTORE_OWNER_PASSWORD',
  'FLAGSTORE_SERVICE_PASSWORD',
  'MINIO_ROOT_PASSWORD',
];

/** The values in a service's environment that are credentials: secrets by name, and the passwords in URLs. */
function credentialsIn(environment: Record<string, string>): Record<string, string> {
  const found: Record<string, string> = {};
  for (const [name, value] of Object.entries(environment)) {
    if (/TOKEN|SECRET|PASSWORD/.test(name)) found[name] = value;
    if (/^[a-z]+:\/\//.test(value) && new URL(value).password) found[`${name} (password)`] = decodeURIComponent(new URL(value).password);
  }
  return found;
}

function dependencies(service: ComposeService): Record<string, string> {
  const raw = service.depends_on ?? {};
  if (Array.isArray(raw)) return Object.fromEntries(raw.map((name) => [name, 'service_started']));
  return Object.fromEntries(Object.entries(raw).map(([name, { condition }]) => [name, condition]));
}

function hostOf(url: string): { user: string; password: string; host: string; port: string; path: string } {
  const parsed = new URL(url);
  return {
    user: decodeURIComponent(parsed.username),
    password: decodeURIComponent(parsed.password),
    host: parsed.hostname,
    port: parsed.port,
    path: parsed.pathname,
  };
}

describe('docker/compose.yml', () => {
  it('runs PostgreSQL, Redis, MinIO and its bucket, two instances and nginx', () => {
    expect(Object.keys(services).sort()).toEqual(['flagstore-1', 'flagstore-2', 'minio', 'minio-bucket', 'nginx', 'postgres', 'redis'].sort());
    for (const name of INSTANCES) {
      expect(services[name].build).toEqual({ context: '..', dockerfile: 'docker/Dockerfile' });
      expect(existsSync(join(DOCKER_DIR, '..', services[name].build!.dockerfile))).toBe(true);
    }
  });

  it('gives every long-running service a healthcheck; a one-shot has none and is waited for by its exit code', () => {
    for (const [name, service] of Object.entries(services)) {
      if (service.restart === 'no') {
        expect({ name, healthcheck: service.healthcheck }).toEqual({ name, healthcheck: { disable: true } });
        continue;
      }
      expect({ name, test: service.healthcheck?.test }).toEqual({ name, test: expect.anything() });
      expect(service.healthcheck?.disable).toBeUndefined();
    }
  });

  it('starts each service only once what it needs is healthy (or, for the bucket, done)', () => {
    for (const [name, service] of Object.entries(services)) {
      for (const [dependency, condition] of Object.entries(dependencies(service))) {
        expect(Object.keys(services)).toContain(dependency);
        const target = services[dependency];
        const expected = target.restart === 'no' ? 'service_completed_successfully' : 'service_healthy';
        expect({ name, dependency, condition }).toEqual({ name, dependency, condition: expected });
      }
    }
    for (const name of INSTANCES) {
      expect(dependencies(services[name])).toEqual({
        postgres: 'service_healthy',
        redis: 'service_healthy',
        minio: 'service_healthy',
        'minio-bucket': 'service_completed_successfully',
      });
    }
    expect(dependencies(services['minio-bucket'])).toEqual({ minio: 'service_healthy' });
    expect(dependencies(services.nginx)).toEqual({ 'flagstore-1': 'service_healthy', 'flagstore-2': 'service_healthy' });
  });

  it('sets on the instances only variables the service reads, and they are identical on both', () => {
    const [first, second] = INSTANCES.map((name) => environmentOf(services[name]));
    expect(second).toEqual(first);
    // loadConfig reads each variable it knows through env[name]: a proxy records which ones it asked for.
    const asked = new Set<string>();
    const env = resolvedEnvironment(services['flagstore-1'], GENERATED);
    loadConfig(new Proxy(env, { get: (target, name: string) => (asked.add(name), target[name]) }));
    const unknown = Object.keys(first).filter((name) => !asked.has(name));
    expect(unknown).toEqual([]);
  });

  it('refers only to variables with a default or marked required, every credential required (no working default)', () => {
    for (const reference of allReferences()) {
      const operator = CREDENTIALS.includes(reference.name) ? /^:\?$/ : /^(:-|:\?)$/;
      expect({ name: reference.name, operator: reference.operator }).toEqual({ name: reference.name, operator: expect.stringMatching(operator) });
      if (reference.operator === ':?') expect(reference.argument).toBe('run docker/init-env.sh, which writes docker/.env with random secrets');
    }
    expect([...new Set(allReferences().map((reference) => reference.name))].filter((name) => CREDENTIALS.includes(name)).sort()).toEqual(
      [...CREDENTIALS].sort(),
    );
  });

  it('does not start without the secrets: each service that needs one stops naming it, and says how to make them', () => {
    for (const name of [...INSTANCES, 'postgres', 'minio', 'minio-bucket']) {
      expect(() => resolvedEnvironment(services[name], {})).toThrow(
        new RegExp(`^(${CREDENTIALS.join('|')}): run docker/init-env\\.sh, which writes docker/\\.env with random secrets$`),
      );
    }
  });

  it('takes every credential from the variables, none from the file itself', () => {
    const given = new Set(Object.values(GENERATED));
    for (const [name, service] of Object.entries(services)) {
      for (const [field, value] of Object.entries(credentialsIn(resolvedEnvironment(service, GENERATED)))) {
        expect({ service: name, field, fromTheEnvFile: given.has(value) }).toEqual({ service: name, field, fromTheEnvFile: true });
      }
    }
  });

  describe.each(SETTINGS)('with %s', (_, variables) => {
    const envOf = (name: string) => resolvedEnvironment(services[name], variables);

    it('gives each instance a configuration that loadConfig accepts, on the compose services', () => {
      for (const name of INSTANCES) {
        const config = loadConfig(envOf(name));
        expect(config.databaseUrl).toBeDefined();
        expect(config.databaseMigrationUrl).toBeDefined();
        expect(config.redisUrl).toBeDefined();
        expect(config.s3).toBeDefined();
        expect(config.adminToken!.length).toBeGreaterThanOrEqual(MIN_SECRET_LENGTH);
        expect(config.uploadSigningSecret!.length).toBeGreaterThanOrEqual(MIN_SECRET_LENGTH);
        // Metrics on the internal listener only: the instances publish no port, and their public one serves none.
        expect(config.metricsPort).toBe(9464);
        expect(config.metricsToken).toBeUndefined();
        expect(services[name].ports).toBeUndefined();
        expect(hostOf(config.databaseUrl!)).toMatchObject({ user: 'flagstore_service', host: 'postgres', port: '5432', path: '/flagstore' });
        expect(hostOf(config.databaseMigrationUrl!)).toMatchObject({ user: 'flagstore_owner', host: 'postgres', port: '5432', path: '/flagstore' });
        expect(hostOf(config.redisUrl!)).toMatchObject({ host: 'redis', port: '6379' });
        expect(hostOf(config.s3!.endPoint)).toMatchObject({ host: 'minio', port: '9000' });
      }
    });

    it('shares the upload-signing secret (and everything else) between the instances', () => {
      const [first, second] = INSTANCES.map((name) => loadConfig(envOf(name)));
      expect(second.uploadSigningSecret).toBe(first.uploadSigningSecret);
      expect(second).toEqual(first);
    });

    it('uses the passwords PostgreSQL and MinIO are given, and the bucket the one-shot creates', () => {
      const config = loadConfig(envOf('flagstore-1'));
      const postgres = envOf('postgres');
      expect(hostOf(config.databaseUrl!).password).toBe(postgres.FLAGSTORE_SERVICE_PASSWORD);
      expect(hostOf(config.databaseMigrationUrl!).password).toBe(postgres.FLAGSTORE_OWNER_PASSWORD);
      const minio = envOf('minio');
      expect(config.s3!.accessKey).toBe(minio.MINIO_ROOT_USER);
      expect(config.s3!.secretKey).toBe(minio.MINIO_ROOT_PASSWORD);
      expect(envOf('minio-bucket')).toMatchObject({
        MINIO_ROOT_USER: minio.MINIO_ROOT_USER,
        MINIO_ROOT_PASSWORD: minio.MINIO_ROOT_PASSWORD,
        S3_BUCKET: config.s3!.bucket,
      });
      // `$$` is Compose's escape: the shell in the container expands these, from the environment above.
      const command = ([] as string[]).concat(services['minio-bucket'].command ?? []).join(' ');
      expect(command).toContain('mc mb --ignore-existing "flagstore/$$S3_BUCKET"');
      expect(command).toContain('mc alias set flagstore http://minio:9000 "$$MINIO_ROOT_USER" "$$MINIO_ROOT_PASSWORD"');
    });

    it('points PUBLIC_URL at nginx, on the port it publishes', () => {
      const config = loadConfig(envOf('flagstore-1'));
      const published = (services.nginx.ports ?? []).map((mapping) =>
        mapping.replace(/\$\{FLAGSTORE_HTTP_PORT:-(\d+)\}/, (_, port: string) => variables.FLAGSTORE_HTTP_PORT ?? port),
      );
      expect(published).toHaveLength(1);
      const [hostPort, containerPort] = published[0].split(':');
      expect(containerPort).toBe('80');
      expect(nginxConf).toMatch(/^\s*listen 80;/m);
      if (variables.PUBLIC_URL) expect(config.urls.publicUrl).toBe(variables.PUBLIC_URL);
      else expect(config.urls.publicUrl).toBe(`http://localhost:${hostPort}`);
    });
  });

  it('has nginx balance exactly the two instances, on the port they listen on', () => {
    const port = loadConfig(resolvedEnvironment(services['flagstore-1'], GENERATED)).http.port;
    expect(upstreamServers(nginxConf, 'flagstore')).toEqual(INSTANCES.map((host) => ({ host, port })));
    expect(services.nginx.volumes).toContain('./nginx.conf:/etc/nginx/nginx.conf:ro');
  });

  it('probes each instance for readiness on its own port, and nginx on its own route', () => {
    const port = loadConfig(resolvedEnvironment(services['flagstore-1'], GENERATED)).http.port;
    for (const name of INSTANCES) {
      const test = ([] as string[]).concat(services[name].healthcheck!.test!).join(' ');
      expect(test).toContain(`http://127.0.0.1:${port}/health/ready`);
    }
    expect(([] as string[]).concat(services.nginx.healthcheck!.test!).join(' ')).toContain('http://127.0.0.1/nginx-health');
    expect(nginxConf).toMatch(/location = \/nginx-health \{[^}]*return 200/);
  });

  it('lets an instance drain for SHUTDOWN_GRACE_SECONDS before Compose kills it', () => {
    const grace = loadConfig(resolvedEnvironment(services['flagstore-1'], GENERATED)).shutdownGraceSeconds;
    for (const name of INSTANCES) {
      const stop = /^(\d+)s$/.exec(services[name].stop_grace_period ?? '');
      expect(stop).not.toBeNull();
      expect(Number(stop![1])).toBeGreaterThan(grace);
    }
  });

  it('has nginx name the client by the address it saw, never passing on an X-Forwarded-For the client sent', () => {
    // TRUST_PROXY trusts nginx's private range: an appended header would let a client on a private network pick
    // the address its failed authentications are counted under.
    expect(loadConfig(resolvedEnvironment(services['flagstore-1'], GENERATED)).trustProxy).toContain('uniquelocal');
    const headers = [...nginxConf.replace(/#.*$/gm, '').matchAll(/proxy_set_header\s+X-Forwarded-For\s+([^;]+);/gi)].map((match) => match[1].trim());
    expect(headers).toEqual(['$remote_addr']);
  });

  it('mounts postgres-init.sh where the postgres image runs it on an empty volume (what it creates: docker-postgres-init)', () => {
    const mount = (services.postgres.volumes ?? []).find((volume) => volume.includes('/docker-entrypoint-initdb.d/'));
    expect(mount).toBe('./postgres-init.sh:/docker-entrypoint-initdb.d/10-flagstore-roles.sh:ro');
    // The image executes an executable *.sh there (and sources one that is not); the script is run as a program.
    accessSync(join(DOCKER_DIR, 'postgres-init.sh'), constants.X_OK);
  });
});

describe('docker/init-env.sh', () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'flagstore-init-env-spec-'));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it('is executable, and docker/.env is ignored by git and left out of the image', () => {
    accessSync(INIT_ENV_SCRIPT, constants.X_OK);
    const ignored = (file: string, pattern: string) =>
      readFileSync(join(DOCKER_DIR, '..', file), 'utf8')
        .split('\n')
        .map((line) => line.trim())
        .includes(pattern);
    expect(ignored('.gitignore', '.env')).toBe(true);
    expect(ignored('.dockerignore', 'docker')).toBe(true);
  });

  it('writes every credential compose requires, random, 64 hex digits each, readable by its owner only', () => {
    const target = join(dir, '.env');
    expect(runInitEnv(target)).toMatch(/^Wrote .*\.env with random secrets/);
    expect(statSync(target).mode & 0o777).toBe(0o600);
    const written = parseEnvFile(readFileSync(target, 'utf8'));
    expect(Object.keys(written).sort()).toEqual([...CREDENTIALS].sort());
    for (const value of Object.values(written)) expect(value).toMatch(/^[0-9a-f]{64}$/);
    expect(new Set(Object.values(written)).size).toBe(CREDENTIALS.length);
    // Another run (another checkout) gets secrets of its own.
    const other = join(dir, 'other.env');
    runInitEnv(other);
    const again = parseEnvFile(readFileSync(other, 'utf8'));
    for (const name of CREDENTIALS) expect(again[name]).not.toBe(written[name]);
  });

  it('keeps an existing file as it is (the volumes keep the first passwords)', () => {
    const target = join(dir, '.env');
    writeFileSync(target, 'ADMIN_TOKEN=mine-0123456789abcdefghijklmnopqrstuv\n');
    expect(runInitEnv(target)).toMatch(/exists: kept as it is/);
    expect(readFileSync(target, 'utf8')).toBe('ADMIN_TOKEN=mine-0123456789abcdefghijklmnopqrstuv\n');
    expect(readdirSync(dir)).toEqual(['.env']);
  });
});
