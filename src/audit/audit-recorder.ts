import { Injectable } from '@nestjs/common';
import { ClsService } from 'nestjs-cls';
import { AuditAction, auditActionFor, FlagSnapshot } from './audit-action';

export interface FlagChange {
  organizationId: string;
  /** Null for a deletion: the entry outlives the row it would reference. */
  flagId: string | null;
  flagKey: string;
  before: FlagSnapshot | null;
  after: FlagSnapshot | null;
}

export interface RecordedChange extends FlagChange {
  action: AuditAction;
}

const PENDING_CHANGES = Symbol('audit.pendingChanges');

/**
 * Collects the flag changes of the current request for the AuditInterceptor, which writes them in the
 * request's transaction. Recording outside an audited request is a programming error and fails loudly,
 * so a flag write cannot silently go unaudited.
 */
@Injectable()
export class AuditRecorder {
  constructor(private readonly cls: ClsService) {}

  /** Starts collecting for the current request (called by the interceptor). */
  open(): void {
    this.cls.set(PENDING_CHANGES, []);
  }

  /** Records a change; returns false for a no-op (nothing to audit, nothing to write). */
  record(change: FlagChange): boolean {
    const pending = this.cls.isActive() ? this.cls.get<RecordedChange[] | undefined>(PENDING_CHANGES) : undefined;
    if (!pending) {
      throw new Error('A flag change was made outside an audited request; decorate the route with @AuditedFlagWrite()');
    }
    const action = auditActionFor(change.before, change.after);
    if (!action) return false;
    pending.push({ ...change, action });
    return true;
  }

  drain(): RecordedChange[] {
    const pending = this.cls.get<RecordedChange[] | undefined>(PENDING_CHANGES) ?? [];
    this.cls.set(PENDING_CHANGES, undefined);
    return pending;
  }
}
