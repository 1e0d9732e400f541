import { CallHandler, createParamDecorator, ExecutionContext, Injectable, NestInterceptor } from '@nestjs/common';
import type { Request, Response } from 'express';
import { map, Observable } from 'rxjs';
import { FlagsErrors } from './flags.errors';

/** A flag's ETag: its row version, strong and quoted (`"3"`). */
export function flagETag(version: number): string {
  return `"${version}"`;
}

/**
 * What an `If-Match` header asks (RFC 9110 13.1.1): any current version (`*`), or one of the listed entity tags.
 * A weak tag never matches: If-Match compares strongly.
 */
export type IfMatch = { any: true } | { tags: readonly string[] };

/** `"tag"` or `W/"tag"`: RFC 9110's entity-tag, its characters being etagc (no space, no `"`, no control character). */
const ENTITY_TAG = /^(W\/)?"([\x21\x23-\x7e\x80-\xff]*)"$/;

const IF_MATCH_FORM = 'If-Match must be * or a comma-separated list of entity tags, such as "3" (the ETag of GET /v1/flags/{flagId})';

/**
 * The header as sent, or undefined when there is none (the write then goes ahead as it always did). A header that is
 * not RFC 9110's form is a 400 naming it, not ignored: a client that meant to guard its write must learn that it did not.
 */
export function parseIfMatch(header: string | string[] | undefined): IfMatch | undefined {
  if (header === undefined) return undefined;
  const text = (Array.isArray(header) ? header.join(',') : header).trim();
  if (text === '*') return { any: true };
  // Empty list members are allowed and ignored (RFC 9110 5.6.1), but a header of nothing else states no condition.
  const members = text
    .split(',')
    .map((member) => member.trim())
    .filter((member) => member !== '');
  if (members.length === 0) throw FlagsErrors.invalid(`${IF_MATCH_FORM}; got an empty header`);
  const tags: string[] = [];
  for (const member of members) {
    const match = ENTITY_TAG.exec(member);
    if (!match) throw FlagsErrors.invalid(`${IF_MATCH_FORM}; got ${JSON.stringify(text.slice(0, 100))}`);
    // A weak tag is well-formed but never matches (strong comparison).
    if (!match[1]) tags.push(`"${match[2]}"`);
  }
  return { tags };
}

/** Whether the flag at `version` satisfies the condition (strong comparison; no condition always holds). */
export function ifMatchHolds(condition: IfMatch | undefined, version: number): boolean {
  if (condition === undefined || 'any' in condition) return true;
  return condition.tags.includes(flagETag(version));
}

/** The route's `If-Match` header, parsed (a 400 naming it when malformed; undefined when absent). */
export const IfMatchHeader = createParamDecorator((_data: unknown, context: ExecutionContext): IfMatch | undefined =>
  parseIfMatch(context.switchToHttp().getRequest<Request>().headers['if-match']),
);

/** A read of one flag and the row version it is at: the body, and the ETag FlagETagInterceptor sends with it. */
export class Versioned<T> {
  constructor(
    readonly body: T,
    readonly version: number,
  ) {}
}

/** Answers a route's `Versioned` result as its body, with the flag's ETag. */
@Injectable()
export class FlagETagInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler<unknown>): Observable<unknown> {
    return next.handle().pipe(
      map((result) => {
        if (!(result instanceof Versioned)) throw new Error('A route with the flag ETag must answer a Versioned result');
        context.switchToHttp().getResponse<Response>().setHeader('ETag', flagETag(result.version));
        return result.body as unknown;
      }),
    );
  }
}
