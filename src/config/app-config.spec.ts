import { randomBytes } from 'node:crypto';
import { ConfigValidationError, loadConfig, MIN_SECRET_LENGTH } from './app-config';

/** What `openssl rand -hex 16` gives: the shortest secret accepted, from the smallest usual alphabet. */
const GENERATED = '3f9c0a7be14d58e2c6b0917d4ae35f08';

describe('loadConfig', () => {
  it('has working defaults for an empty environment', () => {
    const config = loadConfig({});
    expect(config.http).toEqual({ port: 3000, host: '0.0.0.0' });
    expect(config.urls).toEqual({
      publicUrl: 'http://localhost:3000',
      baseUrl: 'http://localhost:3000/v1',
      uploadUrl: 'http://localhost:3000/upload',
      cdnUrl: 'http://localhost:3000',
    });
    expect(config.databaseUrl).toBeUndefined();
    expect(config.databaseMigrationUrl).toBeUndefined();
    expect(config.adminToken).toBeUndefined();
    expect(config.s3).toBeUndefined();
    expect(config.configRateLimitPerMinute).toBe(1200);
    expect(config.corsOrigins).toBeUndefined();
    expect(config.storage).toEqual({ defaultAllocationBytes: 1024 ** 3, maxUploadBytes: 100 * 1024 ** 2, enforceAllocation: false });
    expect(config.apiRateLimitPerMinute).toBe(3000);
    expect(config.log).toEqual({ level: 'info', format: 'json' });
    expect(config.trustProxy).toEqual(['loopback']);
    expect(loadConfig({ TRUST_PROXY: 'loopback, 172.16.0.0/12' }).trustProxy).toEqual(['loopback', '172.16.0.0/12']);
    expect(config.metricsToken).toBeUndefined();
    expect(config.metricsPort).toBeUndefined();
    expect(loadConfig({ METRICS_PORT: '9464' }).metricsPort).toBe(9464);
    expect(config.authFailuresPerMinute).toBe(300);
    expect(config.shutdownGraceSeconds).toBe(10);
    expect(config.timeouts).toEqual({ requestMs: 30_000, uploadIdleMs: 30_000, keepAliveMs: 5_000 });
    expect(
      loadConfig({ HTTP_REQUEST_TIMEOUT_SECONDS: '15', UPLOAD_IDLE_TIMEOUT_SECONDS: '120', HTTP_KEEP_ALIVE_TIMEOUT_SECONDS: '65' }).timeouts,
    ).toEqual({ requestMs: 15_000, uploadIdleMs: 120_000, keepAliveMs: 65_000 });
  });

  it('takes REDIS_PREFIX as the name of a deployment on a shared Redis', () => {
    expect(loadConfig({ REDIS_PREFIX: 'acme:staging' }).redisPrefix).toBe('acme:staging');
    expect(loadConfig({}).redisPrefix).toBeUndefined();
  });

  it('derives URLs from PUBLIC_URL and CDN_URL', () => {
    const config = loadConfig({ PUBLIC_URL: 'https://flags.example.com/', CDN_URL: 'https://cdn.example.com' });
    expect(config.urls.baseUrl).toBe('https://flags.example.com/v1');
    expect(config.urls.uploadUrl).toBe('https://flags.example.com/upload');
    expect(config.urls.cdnUrl).toBe('https://cdn.example.com');
  });

  it('makes the session cookie Secure when PUBLIC_URL is https, whatever the case of its scheme', () => {
    const upper = loadConfig({ PUBLIC_URL: 'HTTPS://Flags.Example.com/studio/' });
    expect(upper.sessions.secureCookie).toBe(true);
    expect(upper.urls.publicUrl).toBe('https://flags.example.com/studio');
    expect(upper.urls.baseUrl).toBe('https://flags.example.com/studio/v1');
    expect(loadConfig({ PUBLIC_URL: 'Https://flags.example.com' }).sessions.secureCookie).toBe(true);
    expect(loadConfig({ PUBLIC_URL: 'HTTP://flags.example.com' }).sessions.secureCookie).toBe(false);
    expect(loadConfig({}).sessions.secureCookie).toBe(false);
  });

  it.each([
    [{ PORT: 'eighty' }, 'PORT'],
    [{ PORT: '70000' }, 'PORT'],
    [{ CONFIG_RATE_LIMIT_PER_MINUTE: '0' }, 'CONFIG_RATE_LIMIT_PER_MINUTE'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
    [{ DATABASE_URL: 'not a url' }, 'DATABASE_URL'],
    [{ DATABASE_URL: 'postgres://app@db/flagstore', DATABASE_MIGRATION_URL: 'mysql://owner@db/flagstore' }, 'DATABASE_MIGRATION_URL'],
    [{ DATABASE_MIGRATION_URL: 'postgres://owner@db/flagstore' }, 'DATABASE_MIGRATION_URL'],
    [{ PUBLIC_URL: 'ftp://x' }, 'PUBLIC_URL'],
    [{ REDIS_URL: 'http://x' }, 'REDIS_URL'],
    [{ REDIS_PREFIX: 'staging studio' }, 'REDIS_PREFIX'],
    [{ REDIS_PREFIX: 'x'.repeat(65) }, 'REDIS_PREFIX'],
    [{ ADMIN_TOKEN: 'short' }, 'ADMIN_TOKEN'],
    [{ ADMIN_TOKEN: 'x'.repeat(31) }, 'ADMIN_TOKEN'],
    [{ UPLOAD_SIGNING_SECRET: 'y'.repeat(31) }, 'UPLOAD_SIGNING_SECRET'],
    [{ API_RATE_LIMIT_PER_MINUTE: '0' }, 'API_RATE_LIMIT_PER_MINUTE'],
    [{ AUTH_FAILURES_PER_MINUTE: 'many' }, 'AUTH_FAILURES_PER_MINUTE'],
    [{ STORAGE_ENFORCE_ALLOCATION: 'yes' }, 'STORAGE_ENFORCE_ALLOCATION'],
    [{ ORGANIZATION_CREATION: 'everyone' }, 'ORGANIZATION_CREATION'],
    [{ ORGANIZATIONS_PER_USER: '0' }, 'ORGANIZATIONS_PER_USER'],
    [{ ORGANIZATIONS_PER_USER: '10001' }, 'ORGANIZATIONS_PER_USER'],
    [{ METRICS_TOKEN: 'z'.repeat(31) }, 'METRICS_TOKEN'],
    [{ METRICS_PORT: 'internal' }, 'METRICS_PORT'],
    [{ METRICS_PORT: '0' }, 'METRICS_PORT'],
    [{ METRICS_PORT: '70000' }, 'METRICS_PORT'],
    [{ METRICS_PORT: '3000' }, 'METRICS_PORT'],
    [{ PORT: '8080', METRICS_PORT: '8080' }, 'METRICS_PORT'],
    [{ LOG_LEVEL: 'verbose' }, 'LOG_LEVEL'],
    [{ LOG_FORMAT: 'xml' }, 'LOG_FORMAT'],
    [{ TRUST_PROXY: '10.0.0.0/99' }, 'TRUST_PROXY'],
    [{ MAX_UPLOAD_BYTES: '-1' }, 'MAX_UPLOAD_BYTES'],
    [{ HTTP_REQUEST_TIMEOUT_SECONDS: '0' }, 'HTTP_REQUEST_TIMEOUT_SECONDS'],
    [{ UPLOAD_IDLE_TIMEOUT_SECONDS: '1.5' }, 'UPLOAD_IDLE_TIMEOUT_SECONDS'],
    [{ HTTP_KEEP_ALIVE_TIMEOUT_SECONDS: 'long' }, 'HTTP_KEEP_ALIVE_TIMEOUT_SECONDS'],
    [{ S3_ENDPOINT: 'http://127.0.0.1:9000' }, 'S3_ACCESS_KEY'],
    [{ S3_REGION: 'eu-west-1' }, 'S3_REGION'],
    [{ CORS_ORIGINS: 'https://game.example.com/' }, 'CORS_ORIGINS'],
    [{ CORS_ORIGINS: 'https://game.example.com/play' }, 'CORS_ORIGINS'],
    [{ CORS_ORIGINS: 'game.example.com' }, 'CORS_ORIGINS'],
    [{ CORS_ORIGINS: 'https://a.example.com,*' }, 'CORS_ORIGINS'],
    [{ CORS_ORIGINS: ',' }, 'CORS_ORIGINS'],
    [{ S3_ENDPOINT: 'http://h', S3_ACCESS_KEY: 'a', S3_SECRET_KEY: 'b', S3_BUCKET: 'Bad_Bucket' }, 'S3_BUCKET'],
  ])('rejects %j naming %s', (env, variable) => {
    expect(() => loadConfig(env)).toThrow(ConfigValidationError);
    expect(() => loadConfig(env)).toThrow(new RegExp(`^Invalid configuration: ${variable} `));
  });

  describe('mail (SMTP_URL, MAIL_FROM)', () => {
    const FROM = 'Flagstore <flags@studio.example>';

    it('is off without SMTP_URL', () => {
      expect(loadConfig({}).mail).toBeUndefined();
    });

    it('takes smtp:// and smtps:// with a URL-encoded user and password, defaulting the port by scheme', () => {
      expect(loadConfig({ SMTP_URL: 'smtp://mailer%40studio.example:p%3As%40ss@mail.studio.example:2525', MAIL_FROM: FROM }).mail).toEqual({
        smtp: { host: 'mail.studio.example', port: 2525, secure: false, user: 'mailer@studio.example', password: 'p:s@ss' },
        from: FROM,
      });
      expect(loadConfig({ SMTP_URL: 'smtps://mail.studio.example/', MAIL_FROM: 'flags@studio.example' }).mail).toEqual({
        smtp: { host: 'mail.studio.example', port: 465, secure: true, user: undefined, password: undefined },
        from: 'flags@studio.example',
      });
      expect(loadConfig({ SMTP_URL: 'smtp://[::1]', MAIL_FROM: FROM }).mail!.smtp).toMatchObject({ host: '::1', port: 587, secure: false });
    });

    it.each([
      [{ SMTP_URL: 'http://mail.studio.example', MAIL_FROM: FROM }, 'SMTP_URL', /must use smtp: or smtps:, got http:/],
      [{ SMTP_URL: 'mail.studio.example:25', MAIL_FROM: FROM }, 'SMTP_URL', /must use smtp: or smtps:/],
      [{ SMTP_URL: 'not a url', MAIL_FROM: FROM }, 'SMTP_URL', /must be an absolute URL: smtp:\/\/user:password@host:port/],
      [{ SMTP_URL: 'smtp:mail.studio.example', MAIL_FROM: FROM }, 'SMTP_URL', /must name the server's host/],
      [{ SMTP_URL: 'smtp://u:secret-pw@mail.studio.example/relay', MAIL_FROM: FROM }, 'SMTP_URL', /must have no path, query or fragment/],
      [{ SMTP_URL: 'smtp://u:secret-pw@mail.studio.example?pool=true', MAIL_FROM: FROM }, 'SMTP_URL', /must have no path, query or fragment/],
      [{ SMTP_URL: 'smtp://mail.studio.example:0', MAIL_FROM: FROM }, 'SMTP_URL', /must name a port between 1 and 65535/],
      [{ SMTP_URL: 'smtp://:secret-pw@mail.studio.example', MAIL_FROM: FROM }, 'SMTP_URL', /has a password without a user/],
      [{ SMTP_URL: 'smtp://u:secret%ZZpw@mail.studio.example', MAIL_FROM: FROM }, 'SMTP_URL', /is not URL-encoded/],
      [{ SMTP_URL: 'smtp://u:secret-pw@mail.studio.example' }, 'MAIL_FROM', /is required once SMTP_URL is set/],
      [{ MAIL_FROM: FROM }, 'MAIL_FROM', /needs SMTP_URL as well/],
      [{ SMTP_URL: 'smtp://u:secret-pw@mail.studio.example', MAIL_FROM: 'flagstore' }, 'MAIL_FROM', /must be an address or Name <address>/],
      [{ SMTP_URL: 'smtp://u:secret-pw@mail.studio.example', MAIL_FROM: 'a@b.example, c@d.example' }, 'MAIL_FROM', /must be an address/],
      [{ SMTP_URL: 'smtp://u:secret-pw@mail.studio.example', MAIL_FROM: 'Flags <a@b.example> <c@d.example>' }, 'MAIL_FROM', /must be an address/],
    ])('rejects %j naming %s, without repeating the password', (env, variable, rule) => {
      expect(() => loadConfig(env)).toThrow(new RegExp(`^Invalid configuration: ${variable} `));
      expect(() => loadConfig(env)).toThrow(rule);
      let message = '';
      try {
        loadConfig(env);
      } catch (error) {
        message = (error as Error).message;
      }
      expect(message).not.toContain('secret');
    });
  });

  it('takes the owner URL for migrations beside DATABASE_URL', () => {
    const config = loadConfig({ DATABASE_URL: 'postgres://app@db/flagstore', DATABASE_MIGRATION_URL: 'postgresql://owner@db/flagstore' });
    expect(config.databaseUrl).toBe('postgres://app@db/flagstore');
    expect(config.databaseMigrationUrl).toBe('postgresql://owner@db/flagstore');
  });

  it('takes a complete S3 configuration, defaulting the region', () => {
    const config = loadConfig({ S3_ENDPOINT: 'http://127.0.0.1:9000', S3_ACCESS_KEY: 'a', S3_SECRET_KEY: 'b', S3_BUCKET: 'files' });
    expect(config.s3).toEqual({ endPoint: 'http://127.0.0.1:9000', accessKey: 'a', secretKey: 'b', bucket: 'files', region: 'us-east-1' });
  });

  it('takes CORS_ORIGINS as * or a list of full origins', () => {
    expect(loadConfig({ CORS_ORIGINS: '*' }).corsOrigins).toBe('*');
    expect(loadConfig({ CORS_ORIGINS: ' https://game.example.com, http://localhost:8080 ' }).corsOrigins).toEqual([
      'https://game.example.com',
      'http://localhost:8080',
    ]);
  });

  it('lets admins create up to 20 organizations each unless ORGANIZATION_CREATION and ORGANIZATIONS_PER_USER say otherwise', () => {
    expect(loadConfig({}).organizationCreation).toEqual({ mode: 'admins', perUser: 20 });
    expect(loadConfig({ ORGANIZATION_CREATION: 'Anyone', ORGANIZATIONS_PER_USER: '3' }).organizationCreation).toEqual({ mode: 'anyone', perUser: 3 });
    expect(loadConfig({ ORGANIZATION_CREATION: 'off' }).organizationCreation.mode).toBe('off');
  });

  it('takes secrets of 32 characters and STORAGE_ENFORCE_ALLOCATION as a boolean', () => {
    expect(loadConfig({ ADMIN_TOKEN: GENERATED }).adminToken).toBe(GENERATED);
    expect(loadConfig({ STORAGE_ENFORCE_ALLOCATION: 'true' }).storage.enforceAllocation).toBe(true);
    expect(loadConfig({ STORAGE_ENFORCE_ALLOCATION: '0' }).storage.enforceAllocation).toBe(false);
  });

  describe('secrets (ADMIN_TOKEN, UPLOAD_SIGNING_SECRET, METRICS_TOKEN)', () => {
    const SECRETS = ['ADMIN_TOKEN', 'UPLOAD_SIGNING_SECRET', 'METRICS_TOKEN'];

    it.each(SECRETS)('refuses %s made of few different characters or of a repeated sequence, naming it', (variable) => {
      for (const [value, reason] of [
        ['a'.repeat(32), /has only 1 different characters/],
        ['ab'.repeat(16), /has only 2 different characters/],
        ['1234567'.repeat(5), /has only 7 different characters/],
        ['0123456789'.repeat(4), /repeats its first 10 characters/],
        ['abcdefghijklmnop'.repeat(2), /repeats its first 16 characters/],
      ] as const) {
        expect(value.length).toBeGreaterThanOrEqual(MIN_SECRET_LENGTH);
        expect(() => loadConfig({ [variable]: value })).toThrow(ConfigValidationError);
        expect(() => loadConfig({ [variable]: value })).toThrow(new RegExp(`^Invalid configuration: ${variable} ${reason.source}`));
      }
    });

    it.each(SECRETS)('refuses %s holding a placeholder, in any spelling, naming it', (variable) => {
      for (const value of [
        'local-only-admin-token-change-me-0123456789',
        'CHANGEME_0123456789abcdefghijklmnopqrstuv',
        'please-Change.Me-before-going-live-0123456789',
        'replace-me-with-a-real-secret-0123456789',
        'an-example-token-of-32-or-more-characters',
        'your-secret-here-0123456789abcdefghijklmn',
        'your_token_here_0123456789abcdefghijklmn',
        'placeholder-0123456789abcdefghijklmnopqrs',
        'insecure-0123456789abcdefghijklmnopqrstuvw',
      ]) {
        expect(() => loadConfig({ [variable]: value })).toThrow(
          new RegExp(`^Invalid configuration: ${variable} is a placeholder \\(it contains "[a-z]+"\\), not a secret`),
        );
      }
    });

    it.each(SECRETS)('takes %s when generated, whatever the alphabet', (variable) => {
      const key = variable === 'ADMIN_TOKEN' ? 'adminToken' : variable === 'METRICS_TOKEN' ? 'metricsToken' : 'uploadSigningSecret';
      for (const value of [
        GENERATED,
        randomBytes(16).toString('hex'),
        randomBytes(32).toString('hex'),
        randomBytes(32).toString('base64url'),
        randomBytes(32).toString('base64'),
        'test-admin-token-0123456789abcdefghijkl',
      ]) {
        expect(loadConfig({ [variable]: value })[key]).toBe(value);
      }
    });
  });

  it('refuses a placeholder as S3_SECRET_KEY, naming it (any length: the store decides that)', () => {
    const s3 = { S3_ENDPOINT: 'http://127.0.0.1:9000', S3_ACCESS_KEY: 'flagstore', S3_BUCKET: 'files' };
    for (const value of ['minioadmin', 'local-only-minio-password-change-me', 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY']) {
      expect(() => loadConfig({ ...s3, S3_SECRET_KEY: value })).toThrow(/^Invalid configuration: S3_SECRET_KEY is a placeholder/);
    }
    expect(loadConfig({ ...s3, S3_SECRET_KEY: 'S3RVER' }).s3!.secretKey).toBe('S3RVER');
  });
});
