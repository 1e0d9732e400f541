import { ExpressAdapter } from '@nestjs/platform-express';

/**
 * Express, with Nest's "no such route" answer (404 NOT_FOUND in the API's error shape, through the exception filters)
 * for every path. NestJS 12 mounts that handler under the global prefix and on the excluded routes alone, so a
 * request for any other path (`/consoles`, `POST /console`, `/no/such/route`) reached Express's own HTML page;
 * NestJS 11, which this restores, mounted it at the root.
 */
export class ApiExpressAdapter extends ExpressAdapter {
  override setNotFoundHandler(handler: Parameters<ExpressAdapter['setNotFoundHandler']>[0]): ReturnType<ExpressAdapter['setNotFoundHandler']> {
    return this.use(handler);
  }
}
