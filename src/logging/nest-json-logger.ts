import type { LoggerService } from '@nestjs/common';
import type { Level, Logger as PinoLogger } from 'pino';

/**
 * Nest's Logger (start-up, the embedded database, migrations, the sweeper, shutdown, a 500's stack) as lines of a
 * pino logger, with nestjs-pino's fields (`context`, `msg`, `err`). main.ts installs one before anything is
 * logged, so that the boot log is JSON from its first line, not Nest's coloured text until the app exists.
 *
 * Nest's RoutesResolver lines are left out: they name each controller under the global prefix even where the
 * prefix is excluded (`HealthController {/v1/health}` for `/health`, `{/v1/c}` for `/c`), paths the app does not
 * serve. The RouterExplorer lines after them name every route as it is mapped.
 */
export class NestJsonLogger implements LoggerService {
  constructor(private readonly pino: PinoLogger) {}

  log(message: unknown, ...params: unknown[]): void {
    this.write('info', message, params);
  }
  error(message: unknown, ...params: unknown[]): void {
    this.write('error', message, params);
  }
  warn(message: unknown, ...params: unknown[]): void {
    this.write('warn', message, params);
  }
  debug(message: unknown, ...params: unknown[]): void {
    this.write('debug', message, params);
  }
  verbose(message: unknown, ...params: unknown[]): void {
    this.write('trace', message, params);
  }
  fatal(message: unknown, ...params: unknown[]): void {
    this.write('fatal', message, params);
  }

  private write(level: Level, message: unknown, params: unknown[]): void {
    // Nest passes the context last; before it, an error's stack.
    const fields: Record<string, unknown> = {};
    if (params.length > 0) fields.context = params[params.length - 1];
    if (fields.context === 'RoutesResolver') return;
    const stack = params.length > 1 ? params[0] : undefined;
    if (message instanceof Error) {
      this.pino[level]({ ...fields, err: message }, message.message);
    } else if (typeof message === 'object' && message !== null) {
      this.pino[level]({ ...fields, ...message });
    } else if (typeof stack === 'string' && /\n\s*at /.test(stack)) {
      this.pino[level]({ ...fields, err: { message: String(message), stack } }, String(message));
    } else {
      this.pino[level](fields, String(message));
    }
  }
}
