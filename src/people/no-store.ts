import type { NextFunction, Request, Response } from 'express';

/** The header every answer of the auth routes goes out with, as documented on their successful answers. */
export const NO_STORE_HEADER = {
  'Cache-Control': {
    description: 'no-store: no cache (a browser’s or a proxy’s) keeps this answer',
    schema: { type: 'string', example: 'no-store' },
  },
};

/**
 * `Cache-Control: no-store` on every answer of the auth routes (sign-in, the session, invitations), set before the
 * guards run, so that a refusal (401, 429) carries it as well as a success: these answers carry the session's CSRF
 * token, who someone is, or who was invited where.
 */
export function noStore(_request: Request, response: Response, next: NextFunction): void {
  response.setHeader('Cache-Control', 'no-store');
  next();
}
