import { parseArgs } from 'node:util';
import { CliError } from './cli-error';
import { COMMANDS, CommandSpec, FlagName, Flags } from './commands';

const FLAG_HELP: Record<FlagName, string> = {
  name: '<name>',
  bytes: '<n>',
  org: '<orgId>',
  key: '<keyId>',
  permissions: 'FLAGS_READ,FLAGS_WRITE,...',
  plan: '<plan>',
  subscription: '<subscriptionId>',
  search: '<text>',
  page: '<n>',
  limit: '<n>',
  email: '<email>',
  user: '<userId>',
  role: 'viewer|editor|admin',
  'admin-email': '<email>',
  'admin-name': '<name>',
  allowance: '<1-10000>|level',
};

export interface ParsedFlags {
  /** Every required flag. */
  flags: Required<Flags>;
  /** The optional flags given. */
  optional: Flags;
}

/** The command's flags, the required ones checked; `help` for `--help`. */
export function parseFlags(commandName: string, command: CommandSpec, args: string[]): ParsedFlags | 'help' {
  const optionalFlags = command.optionalFlags ?? [];
  let values: Record<string, string | boolean | undefined>;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args,
      strict: true,
      allowPositionals: true,
      options: {
        help: { type: 'boolean', short: 'h' },
        ...Object.fromEntries([...command.flags, ...optionalFlags].map((flag) => [flag, { type: 'string' as const }])),
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
  const optional: Flags = {};
  for (const flag of optionalFlags) {
    const value = values[flag];
    if (typeof value === 'string') optional[flag] = value;
  }
  return { flags: flags as Required<Flags>, optional };
}

function flagList(command: CommandSpec): string {
  const all = [...command.flags, ...(command.optionalFlags ?? [])];
  return all.length > 0 ? all.map((flag) => `--${flag}`).join(', ') : 'no flags';
}

export function commandUsage(name: string, command: CommandSpec): string {
  const flags = [
    ...command.flags.map((flag) => `--${flag} ${FLAG_HELP[flag]}`),
    ...(command.optionalFlags ?? []).map((flag) => `[--${flag} ${FLAG_HELP[flag]}]`),
  ].join(' ');
  return `  ${name}${flags ? ` ${flags}` : ''}\n      ${command.summary}\n`;
}

export function usage(): string {
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
