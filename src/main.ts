import 'reflect-metadata';
import { Logger, ServiceUnavailableException } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import { AppModule } from './app/app.module';
import { configureApp } from './app/app.setup';
import { servingLine } from './app/serving-line';
import { shutDown, shutdownBudget } from './app/shutdown';
import { writeApiError } from './http/error-response';
import { HttpDrain } from './http/http-drain';
import { explainListenFailure, ListenError } from './http/listen-error';
import { AppConfig, ConfigValidationError, loadConfig } from './config/app-config';
import { DatabaseSetupError } from './database/database-setup-error';
import { OpenDatabase, openDatabase } from './database/open-database';
import { FlagConfigPoll } from './flag-config/flag-config-poll';
import { ConfigStreamHub } from './flag-config/stream/config-stream.hub';
import { rootLogger, ROOT_LOGGER } from './logging/logging.module';
import { NestJsonLogger } from './logging/nest-json-logger';
import { ApiExpressAdapter } from './http/api-express-adapter';

async function bootstrap(): Promise<void> {
  // The log is JSON lines from the first one: at the defaults until the configuration is read, then as it says.
  Logger.overrideLogger(new NestJsonLogger(rootLogger({ level: 'info', format: 'json' }, process.stdout)));
  const logger = new Logger('Bootstrap');
  let config;
  try {
    config = loadConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigValidationError) {
      logger.error(error.message);
      process.exit(1);
    }
    throw error;
  }
  const bootLogger = new NestJsonLogger(rootLogger(config.log, process.stdout));
  Logger.overrideLogger(bootLogger);

  const database = await openDatabase(config);
  let app: NestExpressApplication | undefined;
  try {
    app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config, database.url), new ApiExpressAdapter(), {
      bodyParser: false,
      logger: bootLogger,
    });
    app.useLogger(new NestJsonLogger(app.get(ROOT_LOGGER)));
    await serve(app, config, database);
  } catch (error) {
    // Nothing is left running behind a failed boot: the app's connections and timers, then the embedded database,
    // within the grace period as at a shutdown.
    const closing = app;
    const steps = { drain: async () => undefined, closeApp: async () => closing?.close(), stopDatabase: (ms: number) => database.close(ms) };
    await shutDown(steps, shutdownBudget(config.shutdownGraceSeconds * 1000, 0), logger);
    throw error;
  }
}

async function serve(app: NestExpressApplication, config: AppConfig, database: OpenDatabase): Promise<void> {
  const logger = new Logger('Bootstrap');
  configureApp(app, config);
  const server = app.getHttpServer();
  const poll = app.get(FlagConfigPoll);
  // In the drain's last moment polls (safe to retry) answer 503, so a proxy retries them on another instance
  // and stops routing here before the listening socket closes.
  const drain = new HttpDrain(server, (request, response) => {
    if (!poll.matches(request)) return false;
    const refusal = Object.assign(new ServiceUnavailableException('This instance is shutting down; retry'), { retryAfterSeconds: 1 });
    writeApiError(response, refusal);
    return true;
  });
  const graceMs = config.shutdownGraceSeconds * 1000;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    // Until now the embedded database stopped itself and exited on these signals (embedded-postgres.ts), which
    // would cut the drain short; this handler owns shutdown and stops the database last.
    process.removeAllListeners(signal);
    process.once(signal, () => {
      logger.log(`${signal} received: draining connections, then shutting down`);
      // Whatever a step does (a database that never answers), the process is gone when the grace period ends.
      setTimeout(() => {
        logger.error(`Shutdown did not end within SHUTDOWN_GRACE_SECONDS (${config.shutdownGraceSeconds} s): exiting now`);
        process.exit(1);
      }, graceMs).unref();
      // Idle keep-alive connections are left to be used once more (answered with Connection: close) or to
      // time out, as the server would time them out anyway, before it stops accepting.
      const budget = shutdownBudget(graceMs, server.keepAliveTimeout);
      // Streams never end by themselves: they end now, with a retry: hint, and their clients reconnect elsewhere.
      app.get(ConfigStreamHub).closeAll();
      void shutDown(
        {
          drain: (timings) => drain.drain(timings),
          closeApp: () => app.close(),
          stopDatabase: (timeoutMs) => database.close(timeoutMs),
        },
        budget,
        logger,
      ).then(
        () => process.exit(0),
        (error: unknown) => {
          logger.error(`Shutdown failed: ${String(error)}`);
          process.exit(1);
        },
      );
    });
  }

  const { port, host } = config.http;
  await app.listen(port, host).catch((error: unknown) => {
    throw explainListenFailure(error, port, host);
  });
  logger.log(servingLine(config.urls));
}

void bootstrap().catch((error: unknown) => {
  // What the operator has to change (the database's setup, a DATA_DIR another process runs, PORT or HOST) is said
  // in one message with its code, as the CLI says it, without a stack trace.
  const report =
    error instanceof DatabaseSetupError || error instanceof ListenError
      ? `${error.code}: ${error.message}`
      : error instanceof Error
        ? (error.stack ?? error.message)
        : String(error);
  new Logger('Bootstrap').error(report);
  process.exit(1);
});
