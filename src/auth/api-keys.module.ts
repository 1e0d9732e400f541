import { Module } from '@nestjs/common';
import { ApiKeyIndex } from './api-key-index';
import { ApiKeysRepository } from './api-keys.repository';

/**
 * API keys: their rows, issued and revoked by organizations (admin API, CLI), and the in-memory index of the live
 * ones that authentication answers from (kept true by ApiKeyAuthenticator).
 */
@Module({ providers: [ApiKeysRepository, ApiKeyIndex], exports: [ApiKeysRepository, ApiKeyIndex] })
export class ApiKeysModule {}
