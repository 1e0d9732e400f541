import { Global, Module } from '@nestjs/common';
import { RateLimiter } from './rate-limiter';
import { RateLimitStore } from './rate-limit.store';

/** The one limiter and its store, for every module that counts requests (global). */
@Global()
@Module({ providers: [RateLimitStore, RateLimiter], exports: [RateLimitStore, RateLimiter] })
export class RateLimitModule {}
