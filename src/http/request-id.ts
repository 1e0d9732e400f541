import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';

export const REQUEST_ID_HEADER = 'x-request-id';

/** Tags each request with an id (the caller's, if it sent a sane one) so a logged 500 can be found again. */
export function requestIdMiddleware(req: Request, res: Response, next: NextFunction): void {
  const given = req.headers[REQUEST_ID_HEADER];
  const id = typeof given === 'string' && /^[\w.-]{1,100}$/.test(given) ? given : randomUUID();
  (req as Request & { id: string }).id = id;
  res.setHeader(REQUEST_ID_HEADER, id);
  next();
}

export function requestIdOf(req: unknown): string | undefined {
  return (req as { id?: string }).id;
}
