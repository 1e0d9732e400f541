import {
  CallHandler,
  ExecutionContext,
  Injectable,
  NestInterceptor,
  OnApplicationBootstrap,
  SetMetadata,
  UseInterceptors,
  applyDecorators,
} from '@nestjs/common';
import { DiscoveryService, MetadataScanner, Reflector } from '@nestjs/core';
import { from, lastValueFrom, Observable } from 'rxjs';
import { AuditActor } from '../audit/audit-entry';
import { PERMISSION_KEY } from '../auth/auth.decorators';
import { AuthenticatedRequest } from '../auth/principal';
import { Permission } from '../auth/permission';
import type { Response } from 'express';
import { ReviewGate } from '../review/review-gate';
import { flagETag } from './flag-version';
import { FlagWrite, FlagWriter, FlagWriteRun } from './flag-writer';

const AUDITED_FLAG_WRITE = 'flags:audited-write';
const DEFERRED_FLAG_WRITE = 'flags:deferred-write';
const REVIEW_EXEMPT = 'flags:review-exempt';

/** Which requests of an audited route the review setting does not guard (they write nothing directly), by their body. */
export type ReviewExemption = (body: unknown) => boolean;

/**
 * Runs the route's handler through FlagWriter, as the calling API key: inside the transaction FlagWriter opens,
 * the handler (and its pipes) run, and the write it answers runs in that transaction; the response is the
 * write's result, with the flag's ETag when the write answers one flag. First in that transaction the review
 * setting is checked (ReviewGate: 403 REVIEW_REQUIRED when the organization requires review and the caller is not
 * an API key with FLAGS_WRITE_UNREVIEWED), unless the route exempts the request.
 */
@Injectable()
export class FlagWriteInterceptor implements NestInterceptor {
  constructor(
    private readonly writer: FlagWriter,
    private readonly review: ReviewGate,
    private readonly reflector: Reflector,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler<FlagWriteRun<unknown>>): Observable<unknown> {
    const request = context.switchToHttp().getRequest<AuthenticatedRequest>();
    const principal = request.principal;
    if (!principal) throw new Error('An audited flag write must authenticate an API key');
    const actor: AuditActor = { actorType: principal.type, actorId: principal.id };
    const exempt = this.reflector.get<ReviewExemption | undefined>(REVIEW_EXEMPT, context.getHandler());
    const guarded = !exempt?.(request.body);
    let outcome: FlagWrite<unknown> | undefined;
    const written = this.writer
      .write(actor, async (tx) => {
        if (guarded) await this.review.admit(tx, principal.organizationId, principal);
        const write = await lastValueFrom(next.handle());
        if (typeof write !== 'function') throw new Error('An audited flag write must answer the write to run (a FlagWriteRun)');
        outcome = await write(tx);
        return outcome;
      })
      .then((result) => {
        if (outcome?.version !== undefined) context.switchToHttp().getResponse<Response>().setHeader('ETag', flagETag(outcome.version));
        return result;
      });
    return from(written);
  }
}

type FlagWriteHandler = (...args: never[]) => FlagWriteRun<unknown>;

/**
 * The route changes flags: its handler answers the service's write as a function of the transaction to run it
 * in (`(tx) => this.flags.update(tx, …)`; the compiler refuses any other handler), and the response body is
 * that write's result, committed together with its audit entry. With the organization's review required it is
 * refused (403 REVIEW_REQUIRED) except for requests `reviewExempt` accepts (an import's dry run, or one that
 * makes a change request; an approved change request's apply).
 */
export function AuditedFlagWrite(options: { reviewExempt?: ReviewExemption } = {}) {
  const decorate = applyDecorators(
    SetMetadata(AUDITED_FLAG_WRITE, true),
    ...(options.reviewExempt ? [SetMetadata(REVIEW_EXEMPT, options.reviewExempt)] : []),
    UseInterceptors(FlagWriteInterceptor),
  );
  return <H extends FlagWriteHandler>(target: object, key: string | symbol, descriptor: TypedPropertyDescriptor<H>) => {
    decorate(target, key, descriptor);
  };
}

/**
 * The route requires FLAGS_WRITE but changes no flag itself: it arranges a change that FlagWriter applies
 * later, audited then (a schedule).
 */
export const DeferredFlagWrite = () => SetMetadata(DEFERRED_FLAG_WRITE, true);

/**
 * Refuses to start an application in which a route that may write flags (it requires FLAGS_WRITE) is not an
 * audited flag write, or the other way round: an unaudited change must be impossible to deploy, not found
 * on its first request.
 */
@Injectable()
export class FlagWriteRoutesCheck implements OnApplicationBootstrap {
  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly reflector: Reflector,
  ) {}

  onApplicationBootstrap(): void {
    const mismatched: string[] = [];
    for (const wrapper of this.discovery.getControllers()) {
      const prototype = wrapper.metatype?.prototype as Record<string, unknown> | undefined;
      if (!prototype) continue;
      for (const name of this.scanner.getAllMethodNames(prototype)) {
        const handler = prototype[name] as () => unknown;
        const writesFlags = this.reflector.get<Permission | undefined>(PERMISSION_KEY, handler) === Permission.FLAGS_WRITE;
        const audited = this.reflector.get<boolean | undefined>(AUDITED_FLAG_WRITE, handler) === true;
        const deferred = this.reflector.get<boolean | undefined>(DEFERRED_FLAG_WRITE, handler) === true;
        if (writesFlags !== (audited !== deferred) || (audited && deferred)) mismatched.push(`${wrapper.name}.${name}`);
      }
    }
    if (mismatched.length > 0) {
      throw new Error(
        `Routes that require FLAGS_WRITE must be @AuditedFlagWrite() or @DeferredFlagWrite() (one of them), and only they may be: ${mismatched.join(', ')}`,
      );
    }
  }
}
