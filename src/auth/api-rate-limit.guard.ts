import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { RateLimitedError } from '../common/rate-limited.error';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { ConfigThrottlerStorage } from '../flag-config/config-throttler.storage';
import { OWN_RATE_LIMIT_KEY } from './auth.decorators';
import { AuthenticatedRequest } from './principal';

/**
 * Runs after authentication: every route an API key calls counts against that key's
 * API_RATE_LIMIT_PER_MINUTE, except those with a budget of their own (the config poll). The counters are the
 * config poll's (in memory, or Redis slices shared by every instance), under a key of their own.
 */
@Injectable()
export class ApiRateLimitGuard implements CanActivate {
  private readonly limit: number;

  constructor(
    private readonly reflector: Reflector,
    private readonly counters: ConfigThrottlerStorage,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.limit = config.apiRateLimitPerMinute;
  }

  static keyFor(apiKeyId: string): string {
    return `api:${apiKeyId}`;
  }

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const principal = context.switchToHttp().getRequest<AuthenticatedRequest>().principal;
    if (!principal) return true; // public or admin route
    if (this.reflector.get<boolean | undefined>(OWN_RATE_LIMIT_KEY, context.getHandler())) return true;
    const record = await this.counters.hit(ApiRateLimitGuard.keyFor(principal.keyId), this.limit);
    if (!record.isBlocked) return true;
    const retryAfter = Math.max(1, record.timeToBlockExpire);
    throw new RateLimitedError(`Rate limit exceeded: at most ${this.limit} requests per minute per API key; retry after ${retryAfter} s`, retryAfter);
  }
}
