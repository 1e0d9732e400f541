import { CallHandler, ExecutionContext, Injectable, NestInterceptor, UseInterceptors } from '@nestjs/common';
import { TransactionHost } from '@nestjs-cls/transactional';
import { TransactionalAdapterTypeOrm } from '@nestjs-cls/transactional-adapter-typeorm';
import { from, lastValueFrom, map, Observable } from 'rxjs';
import { AuthenticatedRequest } from '../auth/principal';
import { InvalidationBus } from '../common/invalidation-bus';
import { AuditRecorder, RecordedChange } from './audit-recorder';
import { AuditRepository } from './audit.repository';

/**
 * Runs a flag-writing route in one transaction and writes the audit entries the route recorded before
 * that transaction commits: a change and its entry exist together or not at all. After the commit it
 * tells the config caches which organizations changed, so the next poll sees the edit.
 */
@Injectable()
export class AuditInterceptor implements NestInterceptor {
  constructor(
    private readonly txHost: TransactionHost<TransactionalAdapterTypeOrm>,
    private readonly recorder: AuditRecorder,
    private readonly audit: AuditRepository,
    private readonly bus: InvalidationBus,
  ) {}

  intercept(context: ExecutionContext, next: CallHandler): Observable<unknown> {
    const principal = context.switchToHttp().getRequest<AuthenticatedRequest>().principal;
    const actor = principal
      ? { actorType: 'apiKey' as const, actorId: principal.keyId }
      : { actorType: 'system' as const, actorId: null };

    const committed = this.txHost.withTransaction(async () => {
      this.recorder.open();
      const result = await lastValueFrom(next.handle(), { defaultValue: undefined });
      const changes = this.recorder.drain();
      await this.audit.insert(changes.map((change) => ({ ...change, ...actor })));
      return { result, changes };
    });

    return from(committed).pipe(
      map(({ result, changes }) => {
        this.announce(changes);
        return result;
      }),
    );
  }

  private announce(changes: RecordedChange[]): void {
    for (const organizationId of new Set(changes.map((change) => change.organizationId))) {
      this.bus.publish('flags', organizationId);
    }
  }
}

/** The route changes flags: run it in one transaction with its audit entries. */
export const AuditedFlagWrite = () => UseInterceptors(AuditInterceptor);
