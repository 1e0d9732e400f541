import { resolve } from 'node:path';
import proxyAddr from 'proxy-addr';

/**
 * The whole runtime configuration, read once at boot from the environment.
 * Every module receives this object through the APP_CONFIG token; nothing else reads process.env.
 */
export interface AppConfig {
  http: { port: number; host: string };
  dataDir: string;
  /** Unset: an embedded PostgreSQL is started under dataDir. */
  databaseUrl?: string;
  /**
   * With databaseUrl: the role that owns the schema, which runs the migrations (and grants the service role what
   * it needs) while the service itself connects as databaseUrl's role. Unset: migrations run as databaseUrl.
   */
  databaseMigrationUrl?: string;
  /** Unset: every admin call answers 401. */
  adminToken?: string;
  urls: {
    publicUrl: string;
    /** Where the API is served: `$PUBLIC_URL/v1`. */
    baseUrl: string;
    /** The host signed upload URLs point at: `$PUBLIC_URL/upload`. */
    uploadUrl: string;
    /** Where uploaded files are served, as `{cdnUrl}/c/<organizationId>/<mediaId>`. */
    cdnUrl: string;
  };
  s3?: { endPoint: string; accessKey: string; secretKey: string; bucket: string; region: string };
  redisUrl?: string;
  /**
   * This deployment's name on a Redis that others share (REDIS_PREFIX): its invalidation channel is
   * `<prefix>:flagstore_invalidation`, so deployments on one Redis never hear each other's changes. Unset: the plain channel.
   */
  redisPrefix?: string;
  /** Unset: generated once and kept in dataDir (see storage). */
  uploadSigningSecret?: string;
  configRateLimitPerMinute: number;
  /** The per-key budget of every other route under base_url (the admin API aside). */
  apiRateLimitPerMinute: number;
  /** Requests with a missing or invalid key, per client address, before any of them reaches the database. */
  authFailuresPerMinute: number;
  /** Failed sign-ins per client address and minute: a budget apart from authFailuresPerMinute. */
  signInFailuresPerMinute: number;
  sessions: {
    /** A session ends after this long without a request. */
    idleMs: number;
    /** And this long after sign-in, whatever its use. */
    maxMs: number;
    /** The cookie is `Secure` when PUBLIC_URL is https. */
    secureCookie: boolean;
  };
  /**
   * The service's mail (SMTP_URL and MAIL_FROM, src/mail): sent through the outbox. Unset: mail is off. The password
   * is kept apart from everything that is logged or answered: only the mail sender reads it.
   */
  mail?: MailConfig;
  /** Single sign-on through the studio's OpenID Connect provider; unset: passwords only. */
  oidc?: { issuer: string; clientId: string; clientSecret: string };
  /** Proxies whose X-Forwarded-For names the client (proxy-addr's terms: `loopback`, `uniquelocal`, CIDRs). */
  trustProxy: string[];
  /** Origins the API (admin API excluded) answers cross-origin: a list, `*`, or unset for no CORS at all. */
  corsOrigins?: CorsOrigins;
  /** The change stream (GET /v1/flags/config/stream) and its mention in OFREP bulk answers. */
  streamsEnabled: boolean;
  /**
   * Set: the public listener serves GET /metrics to `Authorization: Bearer <token>`. Unset: it does not serve
   * /metrics at all (404); use metricsPort.
   */
  metricsToken?: string;
  /** Set: a second, internal listener (on `http.host`) serves GET /metrics there and nothing else, without a token. */
  metricsPort?: number;
  log: { level: LogLevel; format: 'json' | 'pretty' };
  /** SIGTERM: how long requests in flight may take to finish before the process exits. */
  shutdownGraceSeconds: number;
  /** The HTTP server's timeouts, in milliseconds (see src/http/http-timeouts.ts). */
  timeouts: {
    /** A request other than an upload must arrive whole (headers and body) within this; headers always must. */
    requestMs: number;
    /** An upload is cut off when no byte of its body arrives for this long; it has no total limit. */
    uploadIdleMs: number;
    /** An idle keep-alive connection is closed after this: above the proxy's idle upstream timeout. */
    keepAliveMs: number;
  };
  /**
   * The flags an organization may have at each level (FLAGS_ALLOWED_FREE, FLAGS_ALLOWED_SUBSCRIBED): the spec's 5
   * and 50 by default. An organization's own allowance (set through the admin API) overrides its level's.
   */
  flagAllowances: { free: number; subscribed: number };
  storage: {
    defaultAllocationBytes: number;
    maxUploadBytes: number;
    /** The allocation as a hard limit: uploads that would pass it (complete plus pending bytes) answer 413. */
    enforceAllocation: boolean;
  };
  /** Organizations made by signed-in people (POST /v1/organizations): who may, and how many each. */
  organizationCreation: { mode: OrganizationCreationMode; perUser: number };
  /**
   * Webhook URLs (decisions.md, "Webhooks (turn 5)", Safety): https only unless WEBHOOK_ALLOW_HTTP; addresses in
   * loopback, private, link-local, unique-local or metadata ranges refused unless WEBHOOK_ALLOW_PRIVATE (a studio's
   * own network, or tests on loopback).
   */
  webhooks: { allowHttp: boolean; allowPrivate: boolean };
}

/** `admins`: whoever administers at least one organization; `anyone`: every signed-in user; `off`: the admin API only. */
export const ORGANIZATION_CREATION_MODES = ['admins', 'anyone', 'off'] as const;
export type OrganizationCreationMode = (typeof ORGANIZATION_CREATION_MODES)[number];

export type CorsOrigins = '*' | readonly string[];

export interface MailConfig {
  smtp: {
    host: string;
    port: number;
    /** `smtps://`: TLS from the first byte (usually port 465); `smtp://`: STARTTLS when the server offers it. */
    secure: boolean;
    user?: string;
    password?: string;
  };
  /** The From of every mail: an address, or `Name <address>`. */
  from: string;
}

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export const APP_CONFIG = Symbol('APP_CONFIG');

export class ConfigValidationError extends Error {
  constructor(
    readonly variable: string,
    rule: string,
  ) {
    super(`Invalid configuration: ${variable} ${rule}`);
  }
}

type Env = Record<string, string | undefined>;

/** The most flags an allowance may give, whether a level's or one organization's own. */
export const MAX_FLAG_ALLOWANCE = 10_000;

const S3_VARIABLES = ['S3_ENDPOINT', 'S3_ACCESS_KEY', 'S3_SECRET_KEY', 'S3_BUCKET'] as const;

export function loadConfig(env: Env = process.env): AppConfig {
  const port = integer(env, 'PORT', 3000, 0, 65535);
  const host = text(env, 'HOST') ?? '0.0.0.0';
  const { publicUrl, secure } = publicUrlOf(env, port);
  const cdnUrl = stripTrailingSlash(url(env, 'CDN_URL', ['http:', 'https:']) ?? publicUrl);

  return {
    http: { port, host },
    dataDir: resolve(text(env, 'DATA_DIR') ?? './data'),
    databaseUrl: url(env, 'DATABASE_URL', ['postgres:', 'postgresql:']),
    databaseMigrationUrl: databaseMigrationUrl(env),
    adminToken: secret(env, 'ADMIN_TOKEN'),
    urls: { publicUrl, baseUrl: `${publicUrl}/v1`, uploadUrl: `${publicUrl}/upload`, cdnUrl },
    s3: s3Config(env),
    redisUrl: url(env, 'REDIS_URL', ['redis:', 'rediss:']),
    redisPrefix: redisPrefix(env),
    uploadSigningSecret: secret(env, 'UPLOAD_SIGNING_SECRET'),
    configRateLimitPerMinute: integer(env, 'CONFIG_RATE_LIMIT_PER_MINUTE', 1200, 1, 1_000_000_000),
    corsOrigins: corsOrigins(env),
    apiRateLimitPerMinute: integer(env, 'API_RATE_LIMIT_PER_MINUTE', 3000, 1, 1_000_000_000),
    authFailuresPerMinute: integer(env, 'AUTH_FAILURES_PER_MINUTE', 300, 1, 1_000_000_000),
    signInFailuresPerMinute: integer(env, 'SIGN_IN_FAILURES_PER_MINUTE', 30, 1, 1_000_000_000),
    sessions: {
      idleMs: integer(env, 'SESSION_IDLE_MINUTES', 720, 1, 525_600) * 60_000,
      maxMs: integer(env, 'SESSION_MAX_HOURS', 168, 1, 8_760) * 3_600_000,
      secureCookie: secure,
    },
    mail: mailConfig(env),
    oidc: oidcConfig(env),
    trustProxy: trustProxy(env),
    shutdownGraceSeconds: integer(env, 'SHUTDOWN_GRACE_SECONDS', 10, 1, 3600),
    timeouts: {
      requestMs: integer(env, 'HTTP_REQUEST_TIMEOUT_SECONDS', 30, 1, 3600) * 1000,
      uploadIdleMs: integer(env, 'UPLOAD_IDLE_TIMEOUT_SECONDS', 30, 1, 3600) * 1000,
      keepAliveMs: integer(env, 'HTTP_KEEP_ALIVE_TIMEOUT_SECONDS', 5, 1, 3600) * 1000,
    },
    metricsToken: secret(env, 'METRICS_TOKEN'),
    metricsPort: metricsPort(env, port),
    streamsEnabled: boolean(env, 'STREAMS_ENABLED', true),
    webhooks: { allowHttp: boolean(env, 'WEBHOOK_ALLOW_HTTP', false), allowPrivate: boolean(env, 'WEBHOOK_ALLOW_PRIVATE', false) },
    log: { level: oneOf(env, 'LOG_LEVEL', LOG_LEVELS, 'info'), format: oneOf(env, 'LOG_FORMAT', ['json', 'pretty'] as const, 'json') },
    flagAllowances: {
      free: integer(env, 'FLAGS_ALLOWED_FREE', 5, 1, MAX_FLAG_ALLOWANCE),
      subscribed: integer(env, 'FLAGS_ALLOWED_SUBSCRIBED', 50, 1, MAX_FLAG_ALLOWANCE),
    },
    storage: {
      defaultAllocationBytes: integer(env, 'STORAGE_DEFAULT_ALLOCATION', 1024 ** 3, 0, Number.MAX_SAFE_INTEGER),
      maxUploadBytes: integer(env, 'MAX_UPLOAD_BYTES', 100 * 1024 ** 2, 1, Number.MAX_SAFE_INTEGER),
      enforceAllocation: boolean(env, 'STORAGE_ENFORCE_ALLOCATION', false),
    },
    organizationCreation: {
      mode: oneOf(env, 'ORGANIZATION_CREATION', ORGANIZATION_CREATION_MODES, 'admins'),
      perUser: integer(env, 'ORGANIZATIONS_PER_USER', 20, 1, 10_000),
    },
  };
}

/** A deployment's name on a shared Redis: letters, digits, `_`, `-`, `.` and `:`, at most 64. */
function redisPrefix(env: Env): string | undefined {
  const value = text(env, 'REDIS_PREFIX');
  if (value === undefined) return undefined;
  if (!/^[A-Za-z0-9_.:-]{1,64}$/.test(value)) {
    throw new ConfigValidationError('REDIS_PREFIX', 'must be 1-64 letters, digits, _, -, . or : (a name for this deployment on a shared Redis)');
  }
  return value;
}

/** The internal listener's port: another than the public one (PORT 0, a port the system picks, never clashes). */
function metricsPort(env: Env, publicPort: number): number | undefined {
  if (text(env, 'METRICS_PORT') === undefined) return undefined;
  const value = integer(env, 'METRICS_PORT', 0, 1, 65535);
  if (value === publicPort)
    throw new ConfigValidationError('METRICS_PORT', `must differ from PORT (${publicPort}): it names a second, internal listener`);
  return value;
}

const SMTP_URL_FORM = 'smtp://user:password@host:port or smtps://user:password@host:port (user and password URL-encoded)';

/**
 * Mail is on with SMTP_URL, which then needs MAIL_FROM; MAIL_FROM alone is a mistake worth stopping for. No message
 * repeats SMTP_URL: it holds the password.
 */
function mailConfig(env: Env): MailConfig | undefined {
  const raw = text(env, 'SMTP_URL');
  const from = text(env, 'MAIL_FROM');
  if (raw === undefined) {
    if (from !== undefined) throw new ConfigValidationError('MAIL_FROM', 'needs SMTP_URL as well (mail is off without it)');
    return undefined;
  }
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigValidationError('SMTP_URL', `must be an absolute URL: ${SMTP_URL_FORM}`);
  }
  if (parsed.protocol !== 'smtp:' && parsed.protocol !== 'smtps:') {
    throw new ConfigValidationError('SMTP_URL', `must use smtp: or smtps:, got ${parsed.protocol} (${SMTP_URL_FORM})`);
  }
  if (parsed.hostname === '') throw new ConfigValidationError('SMTP_URL', `must name the server's host: ${SMTP_URL_FORM}`);
  if ((parsed.pathname !== '' && parsed.pathname !== '/') || parsed.search !== '' || parsed.hash !== '') {
    throw new ConfigValidationError('SMTP_URL', `must have no path, query or fragment: ${SMTP_URL_FORM}`);
  }
  if (parsed.port === '0') throw new ConfigValidationError('SMTP_URL', `must name a port between 1 and 65535: ${SMTP_URL_FORM}`);
  const secure = parsed.protocol === 'smtps:';
  let user: string | undefined;
  let password: string | undefined;
  try {
    user = parsed.username === '' ? undefined : decodeURIComponent(parsed.username);
    password = parsed.password === '' ? undefined : decodeURIComponent(parsed.password);
  } catch {
    throw new ConfigValidationError('SMTP_URL', `has a user or password that is not URL-encoded: ${SMTP_URL_FORM}`);
  }
  if (password !== undefined && user === undefined) throw new ConfigValidationError('SMTP_URL', `has a password without a user: ${SMTP_URL_FORM}`);
  if (from === undefined) throw new ConfigValidationError('MAIL_FROM', 'is required once SMTP_URL is set (the From of every mail the service sends)');
  if (!MAIL_FROM_FORM.test(from)) {
    throw new ConfigValidationError('MAIL_FROM', `must be an address or Name <address>, such as Flagstore <flags@studio.example>, got "${from}"`);
  }
  const host = parsed.hostname.startsWith('[') ? parsed.hostname.slice(1, -1) : parsed.hostname;
  return { smtp: { host, port: parsed.port === '' ? (secure ? 465 : 587) : Number(parsed.port), secure, user, password }, from };
}

/** `local@domain` or `Display Name <local@domain>`: one address, no line breaks, no second `<` or `@` outside it. */
const MAIL_FROM_FORM = /^(?:[^<>@\s]+@[^<>@\s]+|[^<>@\r\n]*<[^<>@\s]+@[^<>@\s]+>)$/;

const OIDC_VARIABLES = ['OIDC_ISSUER', 'OIDC_CLIENT_ID', 'OIDC_CLIENT_SECRET'] as const;

/** Single sign-on is on when all three are set, off when none is; some of them is a mistake worth stopping for. */
function oidcConfig(env: Env): AppConfig['oidc'] {
  const given = OIDC_VARIABLES.filter((name) => text(env, name) !== undefined);
  if (given.length === 0) return undefined;
  const missing = OIDC_VARIABLES.find((name) => text(env, name) === undefined);
  if (missing) throw new ConfigValidationError(missing, `is required once any of ${OIDC_VARIABLES.join(', ')} is set`);
  return {
    // As given: the ID token's `iss` must equal it exactly, trailing slash included (some providers have one).
    issuer: url(env, 'OIDC_ISSUER', ['http:', 'https:'])!,
    clientId: text(env, 'OIDC_CLIENT_ID')!,
    clientSecret: text(env, 'OIDC_CLIENT_SECRET')!,
  };
}

/** The owner's URL makes sense only beside DATABASE_URL: the embedded database creates both roles itself. */
function databaseMigrationUrl(env: Env): string | undefined {
  const value = url(env, 'DATABASE_MIGRATION_URL', ['postgres:', 'postgresql:']);
  if (value !== undefined && text(env, 'DATABASE_URL') === undefined) {
    throw new ConfigValidationError(
      'DATABASE_MIGRATION_URL',
      'needs DATABASE_URL as well (the embedded database creates its owner and service roles itself)',
    );
  }
  return value;
}

function s3Config(env: Env): AppConfig['s3'] {
  const given = S3_VARIABLES.filter((name) => text(env, name) !== undefined);
  if (given.length === 0) {
    if (text(env, 'S3_REGION') !== undefined) {
      throw new ConfigValidationError('S3_REGION', `needs ${S3_VARIABLES.join(', ')} as well`);
    }
    return undefined;
  }
  const missing = S3_VARIABLES.find((name) => text(env, name) === undefined);
  if (missing) {
    throw new ConfigValidationError(missing, `is required once any of ${S3_VARIABLES.join(', ')} is set`);
  }
  const bucket = text(env, 'S3_BUCKET')!;
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) {
    throw new ConfigValidationError('S3_BUCKET', 'must be a valid bucket name (3-63 lowercase letters, digits, dots, hyphens)');
  }
  return {
    endPoint: url(env, 'S3_ENDPOINT', ['http:', 'https:'])!,
    accessKey: text(env, 'S3_ACCESS_KEY')!,
    secretKey: credential(env, 'S3_SECRET_KEY')!,
    bucket,
    region: text(env, 'S3_REGION') ?? 'us-east-1',
  };
}

/** `*`, or comma-separated full origins (`https://game.example.com`, `http://localhost:8080`), each exactly as a browser sends it. */
function corsOrigins(env: Env): CorsOrigins | undefined {
  const raw = text(env, 'CORS_ORIGINS');
  if (raw === undefined) return undefined;
  if (raw === '*') return '*';
  const origins = raw
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  for (const origin of origins) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(origin);
    } catch {
      parsed = undefined;
    }
    if (!parsed || !['http:', 'https:'].includes(parsed.protocol) || parsed.origin !== origin) {
      throw new ConfigValidationError(
        'CORS_ORIGINS',
        `must be * or comma-separated origins such as https://game.example.com (scheme, host and port only, no path or trailing slash), got "${origin}"`,
      );
    }
  }
  if (origins.length === 0) throw new ConfigValidationError('CORS_ORIGINS', 'must be * or list at least one origin');
  return origins;
}

function text(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value ? value : undefined;
}

/** Tokens and secrets an attacker could try to guess: 32 characters or more. */
export const MIN_SECRET_LENGTH = 32;

/**
 * Fewer different characters than this in a secret means it was typed, not generated. A random secret of the
 * shortest length and the smallest usual alphabet (32 hex digits) has fewer than 8 different ones about once in
 * 28 million draws; base64 practically never. `'a' × 32`, `abab…` and `12345678…` have fewer.
 */
export const MIN_SECRET_DISTINCT_CHARACTERS = 8;

/**
 * Words found in the placeholders of documentation and sample files (`change-me`, `CHANGEME`, `your-token-here`,
 * `example`...), compared with case, spaces, dashes, dots and underscores ignored. Each is 7 letters or more, so
 * that a generated secret contains one by chance about never (a 7-letter word in 43 base64 characters: ~1e-9).
 */
export const PLACEHOLDER_WORDS = ['changeme', 'replaceme', 'example', 'placeholder', 'yoursecret', 'yourtoken', 'insecure', 'minioadmin'] as const;

const GENERATE_ONE = 'generate one, e.g. `openssl rand -hex 32`';

/** Why `value` is a placeholder (it contains a word of PLACEHOLDER_WORDS), or undefined. */
function placeholderIn(value: string): string | undefined {
  const folded = value.toLowerCase().replace(/[\s._-]+/g, '');
  const word = PLACEHOLDER_WORDS.find((candidate) => folded.includes(candidate));
  return word === undefined ? undefined : `is a placeholder (it contains "${word}"), not a secret`;
}

/**
 * Why `value` is guessable although long enough, or undefined. The rule, deliberately simple: at least
 * MIN_SECRET_DISTINCT_CHARACTERS different characters, and not a shorter sequence repeated (`0123456789` × 4).
 */
function guessableShapeOf(value: string): string | undefined {
  const distinct = new Set(value).size;
  if (distinct < MIN_SECRET_DISTINCT_CHARACTERS) {
    return `has only ${distinct} different characters (at least ${MIN_SECRET_DISTINCT_CHARACTERS} are required), so it is guessable`;
  }
  for (let period = 1; period <= value.length / 2; period += 1) {
    if (value.slice(period) === value.slice(0, value.length - period)) {
      return `repeats its first ${period} characters, so it is guessable`;
    }
  }
  return undefined;
}

function trustProxy(env: Env): string[] {
  const entries = (text(env, 'TRUST_PROXY') ?? 'loopback')
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  try {
    proxyAddr.compile(entries);
  } catch (error) {
    throw new ConfigValidationError('TRUST_PROXY', `must list loopback, linklocal, uniquelocal, addresses or CIDRs: ${(error as Error).message}`);
  }
  return entries;
}

function oneOf<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = text(env, name)?.toLowerCase();
  if (raw === undefined) return fallback;
  if (!(allowed as readonly string[]).includes(raw)) throw new ConfigValidationError(name, `must be one of ${allowed.join(', ')}, got "${raw}"`);
  return raw as T;
}

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = text(env, name)?.toLowerCase();
  if (raw === undefined) return fallback;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw new ConfigValidationError(name, `must be true or false, got "${raw}"`);
}

function secret(env: Env, name: string): string | undefined {
  const value = text(env, name);
  if (value === undefined) return undefined;
  if (value.length < MIN_SECRET_LENGTH) {
    throw new ConfigValidationError(name, `must be at least ${MIN_SECRET_LENGTH} characters long`);
  }
  const weakness = placeholderIn(value) ?? guessableShapeOf(value);
  if (weakness) throw new ConfigValidationError(name, `${weakness}: ${GENERATE_ONE}`);
  return value;
}

/** A credential that is not ours to size (an object store's own secret key): only a placeholder is refused. */
function credential(env: Env, name: string): string | undefined {
  const value = text(env, name);
  const placeholder = value === undefined ? undefined : placeholderIn(value);
  if (placeholder) throw new ConfigValidationError(name, `${placeholder}: set the store's real secret`);
  return value;
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = text(env, name);
  if (raw === undefined) return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigValidationError(name, `must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new ConfigValidationError(name, `must be between ${min} and ${max}, got ${raw}`);
  return value;
}

function url(env: Env, name: string, protocols: string[]): string | undefined {
  const raw = text(env, name);
  if (raw === undefined) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(raw);
  } catch {
    throw new ConfigValidationError(name, 'must be an absolute URL');
  }
  if (!protocols.includes(parsed.protocol)) {
    throw new ConfigValidationError(name, `must use ${protocols.join(' or ')}, got ${parsed.protocol}`);
  }
  return raw;
}

/**
 * PUBLIC_URL, parsed once: written as the URL parser spells it (scheme and host lowercased, so `HTTPS://Flags.Example`
 * is `https://flags.example`), without a trailing slash, and whether it is https (the session cookie's `Secure`).
 */
function publicUrlOf(env: Env, port: number): { publicUrl: string; secure: boolean } {
  const given = url(env, 'PUBLIC_URL', ['http:', 'https:']);
  if (given === undefined) return { publicUrl: `http://localhost:${port}`, secure: false };
  const parsed = new URL(given);
  return { publicUrl: stripTrailingSlash(parsed.href), secure: parsed.protocol === 'https:' };
}

function stripTrailingSlash(value: string): string {
  return value.replace(/\/+$/, '');
}
