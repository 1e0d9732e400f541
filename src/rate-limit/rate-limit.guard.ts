import { CanActivate, ExecutionContext, Injectable, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { RateLimitBudget, RateLimiter } from './rate-limiter';

const RATE_LIMIT_BUDGET_KEY = 'rate-limit:budget';

/** The budget the route's requests count against; without it, RateLimitBudget.API. */
export const RateLimit = (budget: RateLimitBudget) => SetMetadata(RATE_LIMIT_BUDGET_KEY, budget);

/**
 * Global, after authentication: every request of an API key counts against its key's budget, the one its
 * route names with @RateLimit() or API_RATE_LIMIT_PER_MINUTE's. Public and admin routes carry no key and
 * count nothing here.
 */
@Injectable()
export class RateLimitGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly limiter: RateLimiter,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const principal = context.switchToHttp().getRequest<{ principal?: { id: string } }>().principal;
    if (!principal) return true;
    const budget = this.reflector.get<RateLimitBudget | undefined>(RATE_LIMIT_BUDGET_KEY, context.getHandler()) ?? RateLimitBudget.API;
    await this.limiter.take(budget, principal.id);
    return true;
  }
}
