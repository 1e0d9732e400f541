import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import { AppModule } from './app.module';
import { configureApp } from './app.setup';
import { ConfigValidationError, loadConfig } from './config/app-config';
import { openDatabase } from './database/open-database';

async function bootstrap(): Promise<void> {
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

  const database = await openDatabase(config);
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config, database.url), {
    bodyParser: false,
  });
  configureApp(app, config);
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      logger.log(`${signal} received, shutting down`);
      void app
        .close()
        .then(() => database.close())
        .finally(() => process.exit(0));
    });
  }

  await app.listen(config.http.port, config.http.host);
  logger.log(`Serving ${config.urls.baseUrl} (docs at ${config.urls.publicUrl}/docs)`);
}

void bootstrap().catch((error: unknown) => {
  new Logger('Bootstrap').error(error instanceof Error ? (error.stack ?? error.message) : String(error));
  process.exit(1);
});
