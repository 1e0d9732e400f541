import { applyDecorators, CallHandler, ExecutionContext, Injectable, NestInterceptor, UseInterceptors } from '@nestjs/common';
import type { Response } from 'express';
import { Observable } from 'rxjs';

/** The header an answer that carries a session's CSRF token, or an invitation's details, goes out with. */
export const NO_STORE_HEADER = {
  'Cache-Control': {
    description: 'no-store: no cache (a browser’s or a proxy’s) keeps this answer',
    schema: { type: 'string', example: 'no-store' },
  },
};

/**
 * Sets `Cache-Control: no-store` before the handler runs, so that its answer, an error's included (the filters keep the
 * headers set), is never kept by a cache: these answers carry the CSRF token or who was invited where.
 */
@Injectable()
export class NoStoreInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    context.switchToHttp().getResponse<Response>().setHeader('Cache-Control', 'no-store');
    return next.handle();
  }
}

export const NoStore = () => applyDecorators(UseInterceptors(NoStoreInterceptor));
