import 'reflect-metadata';
import { cliErrorBody } from './cli/cli-error';
import { runCli } from './cli/run';

/**
 * The admin CLI: `npm run cli -- <command> [--flags]` (run as `node dist/cli.js`). Each command does exactly
 * what its admin API call does (src/cli/commands.ts), on a module holding only what the commands use
 * (src/cli/cli.module.ts). stdout carries one JSON document (the result); errors are
 * `{ "error": { "code", "message" } }` on stderr with exit code 1.
 */
runCli(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`${JSON.stringify({ error: cliErrorBody(error) }, null, 2)}\n`);
    process.exit(1);
  },
);
