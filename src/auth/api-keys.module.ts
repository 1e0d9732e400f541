import { Module } from '@nestjs/common';
import { ApiKeysRepository } from './api-keys.repository';

/** API keys' rows: issued and revoked by organizations (admin API, CLI), looked up by authentication. */
@Module({ providers: [ApiKeysRepository], exports: [ApiKeysRepository] })
export class ApiKeysModule {}
