import { ConfigValidationError, loadConfig } from './app-config';

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
    expect(config.authFailuresPerMinute).toBe(300);
    expect(config.shutdownGraceSeconds).toBe(10);
    expect(config.timeouts).toEqual({ requestMs: 30_000, uploadIdleMs: 30_000, keepAliveMs: 5_000 });
    expect(
      loadConfig({ HTTP_REQUEST_TIMEOUT_SECONDS: '15', UPLOAD_IDLE_TIMEOUT_SECONDS: '120', HTTP_KEEP_ALIVE_TIMEOUT_SECONDS: '65' }).timeouts,
    ).toEqual({ requestMs: 15_000, uploadIdleMs: 120_000, keepAliveMs: 65_000 });
  });

  it('derives URLs from PUBLIC_URL and CDN_URL', () => {
    const config = loadConfig({ PUBLIC_URL: 'https://flags.example.com/', CDN_URL: 'https://cdn.example.com' });
    expect(config.urls.baseUrl).toBe('https://flags.example.com/v1');
    expect(config.urls.uploadUrl).toBe('https://flags.example.com/upload');
    expect(config.urls.cdnUrl).toBe('https://cdn.example.com');
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
    [{ ADMIN_TOKEN: 'short' }, 'ADMIN_TOKEN'],
    [{ ADMIN_TOKEN: 'x'.repeat(31) }, 'ADMIN_TOKEN'],
    [{ UPLOAD_SIGNING_SECRET: 'y'.repeat(31) }, 'UPLOAD_SIGNING_SECRET'],
    [{ API_RATE_LIMIT_PER_MINUTE: '0' }, 'API_RATE_LIMIT_PER_MINUTE'],
    [{ AUTH_FAILURES_PER_MINUTE: 'many' }, 'AUTH_FAILURES_PER_MINUTE'],
    [{ STORAGE_ENFORCE_ALLOCATION: 'yes' }, 'STORAGE_ENFORCE_ALLOCATION'],
    [{ METRICS_TOKEN: 'z'.repeat(31) }, 'METRICS_TOKEN'],
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

  it('takes secrets of 32 characters and STORAGE_ENFORCE_ALLOCATION as a boolean', () => {
    expect(loadConfig({ ADMIN_TOKEN: 'x'.repeat(32) }).adminToken).toBe('x'.repeat(32));
    expect(loadConfig({ STORAGE_ENFORCE_ALLOCATION: 'true' }).storage.enforceAllocation).toBe(true);
    expect(loadConfig({ STORAGE_ENFORCE_ALLOCATION: '0' }).storage.enforceAllocation).toBe(false);
  });
});
