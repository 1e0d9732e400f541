import 'reflect-metadata';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { HttpException, Logger, LoggerService } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { ClassConstructor, plainToInstance } from 'class-transformer';
import { isUUID, validate } from 'class-validator';
import { AppModule } from './app/app.module';
import { DomainError } from './common/domain-error';
import { codeForStatus } from './http/error-body';
import { describeValidationErrors } from './common/validation';
import { AppConfig, ConfigValidationError, loadConfig } from './config/app-config';
import { DatabaseSetupError } from './database/database-setup-error';
import { runningPostmaster } from './database/embedded-postgres';
import { openDatabase } from './database/open-database';
import {
  CreateApiKeyDto,
  CreateOrganizationDto,
  CreateSubscriptionDto,
  UpdateOrganizationDto,
} from './organizations/dto/organization.dto';
import { OrganizationsService } from './organizations/organizations.service';

/**
 * The admin CLI: `npm run cli -- <command> [--flags]`. Each command does exactly what its admin API call
 * does, through the same OrganizationsService and the same DTO validation rules. stdout carries one JSON
 * document (the result); errors are `{ "error": { "code", "message" } }` on stderr with exit code 1.
 */

type FlagName = 'name' | 'bytes' | 'org' | 'key' | 'permissions' | 'plan' | 'subscription';
type Flags = Partial<Record<FlagName, string>>;

interface CommandSpec {
  summary: string;
  flags: FlagName[];
  /** Validates the flags (before any database is opened) and returns the call to make. */
  prepare(flags: Required<Flags>): Promise<(service: OrganizationsService) => Promise<unknown>> | null;
}

const FLAG_HELP: Record<FlagName, string> = {
  name: '<name>',
  bytes: '<n>',
  org: '<orgId>',
  key: '<keyId>',
  permissions: 'FLAGS_READ,FLAGS_WRITE,...',
  plan: '<plan>',
  subscription: '<subscriptionId>',
};

/** Which flag a DTO property comes from, so that a validation message names both. */
const FLAG_OF_PROPERTY: Record<string, FlagName> = {
  name: 'name',
  storageAllocation: 'bytes',
  permissions: 'permissions',
  plan: 'plan',
};

const COMMANDS: Record<string, CommandSpec> = {
  'create-org': {
    summary: 'Create an organization (POST /v1/admin/organizations)',
    flags: ['name'],
    prepare: async (flags) => {
      const dto = await validated(CreateOrganizationDto, { name: flags.name });
      return (service) => service.createOrganization(dto);
    },
  },
  'set-allocation': {
    summary: "Set an organization's storage allocation in bytes (PATCH /v1/admin/organizations/{orgId})",
    flags: ['org', 'bytes'],
    prepare: async (flags) => {
      const org = uuid('org', flags.org);
      const dto = await validated(UpdateOrganizationDto, { storageAllocation: integerArgument('bytes', 'storageAllocation', flags.bytes) });
      return (service) => service.updateOrganization(org, dto);
    },
  },
  'create-key': {
    summary: 'Issue an API key; the key is printed once (POST /v1/admin/organizations/{orgId}/api-keys)',
    flags: ['org', 'name', 'permissions'],
    prepare: async (flags) => {
      const org = uuid('org', flags.org);
      const permissions = flags.permissions.trim() === '' ? [] : flags.permissions.split(',').map((p) => p.trim());
      const dto = await validated(CreateApiKeyDto, { name: flags.name, permissions });
      return (service) => service.createApiKey(org, dto);
    },
  },
  'revoke-key': {
    summary: 'Revoke an API key (DELETE /v1/admin/organizations/{orgId}/api-keys/{keyId})',
    flags: ['org', 'key'],
    prepare: async (flags) => {
      const org = uuid('org', flags.org);
      const key = uuid('key', flags.key);
      return async (service) => {
        await service.revokeApiKey(org, key);
        return { revoked: key };
      };
    },
  },
  subscribe: {
    summary: 'Add an active subscription (POST /v1/admin/organizations/{orgId}/subscriptions)',
    flags: ['org', 'plan'],
    prepare: async (flags) => {
      const org = uuid('org', flags.org);
      const dto = await validated(CreateSubscriptionDto, { plan: flags.plan });
      return (service) => service.createSubscription(org, dto);
    },
  },
  unsubscribe: {
    summary: 'Cancel a subscription (DELETE /v1/admin/organizations/{orgId}/subscriptions/{subscriptionId})',
    flags: ['org', 'subscription'],
    prepare: async (flags) => {
      const org = uuid('org', flags.org);
      const subscription = uuid('subscription', flags.subscription);
      return async (service) => {
        await service.cancelSubscription(org, subscription);
        return { cancelled: subscription };
      };
    },
  },
  migrate: {
    summary: 'Apply pending database migrations',
    flags: [],
    prepare: () => null,
  },
};

/** An error the CLI reports as `{ error: { code, message } }`. */
class CliError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Nest and the database launcher log through Nest's Logger; stdout is reserved for the one JSON result,
 * so warnings and errors go to stderr and progress messages are kept only where the CLI needs them.
 */
class StderrLogger implements LoggerService {
  log(): void {
    // Progress messages would only add noise to a one-shot command.
  }
  error(message: unknown, ...rest: unknown[]): void {
    process.stderr.write(`[error] ${[message, ...rest].filter((part) => part !== undefined).join(' ')}\n`);
  }
  warn(message: unknown, context?: string): void {
    process.stderr.write(`[warn]${context ? ` ${context}:` : ''} ${String(message)}\n`);
  }
  debug(): void {}
  verbose(): void {}
}

async function main(argv: string[]): Promise<number> {
  const [commandName, ...rest] = argv;
  if (commandName === undefined) throw new CliError('USAGE_ERROR', 'No command given; run with --help for the list');
  if (commandName === '--help' || commandName === '-h' || commandName === 'help') {
    process.stdout.write(usage());
    return 0;
  }
  const command = Object.prototype.hasOwnProperty.call(COMMANDS, commandName) ? COMMANDS[commandName] : undefined;
  if (!command) throw new CliError('USAGE_ERROR', `Unknown command "${commandName}"; run with --help for the list`);
  const flags = parseFlags(commandName, command, rest);
  if (flags === 'help') {
    process.stdout.write(commandUsage(commandName, command));
    return 0;
  }
  const call = await command.prepare(flags);

  let config: AppConfig;
  try {
    config = loadConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigValidationError) throw new CliError('CONFIG_ERROR', error.message);
    throw error;
  }
  if (!config.databaseUrl) await assertClusterNotInUse(config.dataDir);

  const logger = new StderrLogger();
  Logger.overrideLogger(logger);
  let result: unknown;
  const database = await openDatabase(config);
  try {
    if (!call) {
      result = { applied: database.applied };
    } else {
      const app = await NestFactory.createApplicationContext(AppModule.forRoot(config, database.url), {
        logger,
        abortOnError: false,
      });
      try {
        // The service opens its transactions itself, exactly as for an HTTP request.
        result = await call(app.get(OrganizationsService));
      } finally {
        await app.close();
      }
    }
  } finally {
    await database.close();
  }
  // Printed once everything is closed, so a successful exit and the printed result always go together.
  writeResult(result);
  return 0;
}

function parseFlags(commandName: string, command: CommandSpec, args: string[]): Required<Flags> | 'help' {
  let values: Record<string, string | boolean | undefined>;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args,
      strict: true,
      allowPositionals: true,
      options: {
        help: { type: 'boolean', short: 'h' },
        ...Object.fromEntries(command.flags.map((flag) => [flag, { type: 'string' as const }])),
      },
    }));
  } catch (error) {
    // Unknown flags, or a flag without its value: what forbidNonWhitelisted does for a body.
    const { code, message } = error as NodeJS.ErrnoException;
    const reason =
      code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION'
        ? (message.split('. ')[0] ?? message) // the rest suggests '--', which no command takes
        : message.replace(/\s*\n\s*/g, ' '); // e.g. how to pass a value starting with '-': --bytes=-1
    throw new CliError('USAGE_ERROR', `${reason} (${commandName} takes ${flagList(command)})`);
  }
  if (values.help) return 'help';
  if (positionals.length > 0) {
    throw new CliError('USAGE_ERROR', `Unexpected argument "${positionals[0]}" (${commandName} takes ${flagList(command)})`);
  }
  const flags: Flags = {};
  for (const flag of command.flags) {
    const value = values[flag];
    if (typeof value !== 'string') throw new CliError('VALIDATION_ERROR', `--${flag} is required`);
    flags[flag] = value;
  }
  return flags as Required<Flags>;
}

/** The DTO the admin API would receive, validated with the same options as its ValidationPipe. */
async function validated<T extends object>(type: ClassConstructor<T>, plain: Record<string, unknown>): Promise<T> {
  const dto = plainToInstance(type, plain);
  const errors = await validate(dto, { whitelist: true, forbidNonWhitelisted: true });
  if (errors.length > 0) {
    const flag = FLAG_OF_PROPERTY[errors[0].property];
    throw new CliError('VALIDATION_ERROR', `${describeValidationErrors(errors)}${flag ? ` (--${flag})` : ''}`);
  }
  return dto;
}

function uuid(flag: FlagName, value: string): string {
  if (!isUUID(value)) throw new CliError('VALIDATION_ERROR', `--${flag} must be a valid UUID`);
  return value;
}

/** JSON would carry a number; a command line carries text, which must be a plain integer to become one. */
function integerArgument(flag: FlagName, property: string, raw: string): number {
  const text = raw.trim();
  // Decimals go on to the DTO, whose @IsInt names the rule; text that is no number at all stops here.
  if (!/^-?\d+(\.\d+)?$/.test(text)) throw new CliError('VALIDATION_ERROR', `${property} must be an integer number (--${flag})`);
  return Number(text);
}

/**
 * An embedded cluster can be run by one process only. When `npm start` owns it, starting it here would
 * make the launcher stop the service's database as if it were an orphan, so refuse before touching it.
 */
async function assertClusterNotInUse(dataDir: string): Promise<void> {
  const clusterDir = join(dataDir, 'postgres');
  let pid: number | null;
  try {
    pid = await runningPostmaster(clusterDir);
  } catch (error) {
    throw new CliError('DATABASE_UNAVAILABLE', `Cannot read ${join(clusterDir, 'postmaster.pid')}: ${(error as Error).message}`);
  }
  if (pid === null) return;
  throw new CliError(
    'DATABASE_IN_USE',
    `The embedded PostgreSQL in ${clusterDir} is running (pid ${pid}), normally because the service is running ` +
      'with this DATA_DIR, and one cluster cannot be shared by two processes. While the service runs, use the ' +
      'admin API (Authorization: Bearer $ADMIN_TOKEN on /v1/admin/...), or point DATABASE_URL at a PostgreSQL ' +
      'server. If no service is running, that server is left over from a killed run: start the service once ' +
      '(it stops the leftover) and stop it, then retry.',
  );
}

function writeResult(result: unknown): void {
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
}

function toErrorBody(error: unknown): { code: string; message: string } {
  if (error instanceof CliError || error instanceof DomainError || error instanceof DatabaseSetupError) {
    return { code: error.code, message: error.message };
  }
  if (error instanceof HttpException) {
    const response = error.getResponse();
    const message = typeof response === 'object' && response && 'message' in response ? response.message : error.message;
    return { code: codeForStatus(error.getStatus()), message: Array.isArray(message) ? message.join('; ') : String(message) };
  }
  return { code: 'INTERNAL_ERROR', message: error instanceof Error ? error.message : String(error) };
}

function flagList(command: CommandSpec): string {
  return command.flags.length > 0 ? command.flags.map((flag) => `--${flag}`).join(', ') : 'no flags';
}

function commandUsage(name: string, command: CommandSpec): string {
  const flags = command.flags.map((flag) => `--${flag} ${FLAG_HELP[flag]}`).join(' ');
  return `  ${name}${flags ? ` ${flags}` : ''}\n      ${command.summary}\n`;
}

function usage(): string {
  return [
    'Usage: npm run cli -- <command> [--flags]',
    '',
    'Prints one JSON document on stdout; errors are {"error":{"code","message"}} on stderr with exit code 1.',
    'Reads the same environment as the service (DATA_DIR, DATABASE_URL, ...). The embedded database cannot be',
    'shared with a running service: while it runs, use the admin API or DATABASE_URL.',
    '',
    'Commands:',
    ...Object.entries(COMMANDS).map(([name, command]) => commandUsage(name, command).trimEnd()),
    '',
  ].join('\n');
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`${JSON.stringify({ error: toErrorBody(error) }, null, 2)}\n`);
    process.exit(1);
  },
);
