import { NestFactory } from '@nestjs/core';
import { NestExpressApplication } from '@nestjs/platform-express';
import { OpenAPIObject } from '@nestjs/swagger';
import { AppConfig } from '../config/app-config';
import { API_PREFIX } from '../http/api-prefix';
import { AppModule } from './app.module';
import { openApiDocument, ROOT_ROUTES } from './app.setup';

/**
 * The document GET /docs-json serves, made with no database and no server: the app in Nest's preview mode builds its
 * module graph without instantiating a provider, and the document reads only the controllers' metadata.
 */
export async function previewOpenApiDocument(config: AppConfig): Promise<OpenAPIObject> {
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config, 'postgres://unused@127.0.0.1:1/unused'), {
    preview: true,
    logger: false,
    bodyParser: false,
  });
  try {
    app.setGlobalPrefix(API_PREFIX, { exclude: ROOT_ROUTES });
    return openApiDocument(app, config);
  } finally {
    await app.close();
  }
}
