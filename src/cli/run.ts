import { Logger, LoggerService } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { AppConfig, ConfigValidationError, loadConfig } from '../config/app-config';
import { DatabaseInUseError } from '../database/database-setup-error';
import { openDatabase } from '../database/open-database';
import { OrganizationsService } from '../organizations/organizations.service';
import { PeopleService } from '../people/people.service';
import { commandUsage, parseFlags, usage } from './arguments';
import { CliError } from './cli-error';
import { commandNamed } from './commands';
import { CliModule } from './cli.module';

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

/**
 * Runs one command: writes its result (or the usage) to stdout and resolves to the exit code; rejects with the
 * error to report. Flags are validated before any database is opened.
 */
export async function runCli(argv: string[]): Promise<number> {
  const [commandName, ...rest] = argv;
  if (commandName === undefined) throw new CliError('USAGE_ERROR', 'No command given; run with --help for the list');
  if (commandName === '--help' || commandName === '-h' || commandName === 'help') {
    process.stdout.write(usage());
    return 0;
  }
  const command = commandNamed(commandName);
  if (!command) throw new CliError('USAGE_ERROR', `Unknown command "${commandName}"; run with --help for the list`);
  const parsed = parseFlags(commandName, command, rest);
  if (parsed === 'help') {
    process.stdout.write(commandUsage(commandName, command));
    return 0;
  }
  const call = await command.prepare(parsed.flags, parsed.optional, process.env);

  let config: AppConfig;
  try {
    config = loadConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigValidationError) throw new CliError('CONFIG_ERROR', error.message);
    throw error;
  }

  const logger = new StderrLogger();
  Logger.overrideLogger(logger);
  let result: unknown;
  const database = await openDatabase(config).catch((error: unknown) => {
    // The launcher refuses a cluster that the service (or another command) runs, as the server does; here the
    // operator is also told how to act on a running service.
    if (error instanceof DatabaseInUseError) {
      throw new CliError(
        error.code,
        `${error.message} While the service runs, use the admin API (Authorization: Bearer $ADMIN_TOKEN on /v1/admin/...).`,
      );
    }
    throw error;
  });
  try {
    if (!call) {
      result = { applied: database.applied };
    } else {
      const app = await NestFactory.createApplicationContext(CliModule.forRoot(config, database.url), {
        logger,
        abortOnError: false,
      });
      try {
        // The service opens its transactions itself, exactly as for an HTTP request.
        result = await call({ organizations: app.get(OrganizationsService), people: app.get(PeopleService) });
      } finally {
        await app.close();
      }
    }
  } finally {
    await database.close();
  }
  // Printed once everything is closed, so a successful exit and the printed result always go together.
  process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  return 0;
}
