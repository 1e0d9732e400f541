import { Inject, Injectable } from '@nestjs/common';
import { AuditActor } from '../audit/audit-entry';
import { actorName } from '../audit/actor-name';
import { Principal } from '../auth/principal';
import { CLOCK, Clock } from '../common/clock';
import { DomainError } from '../common/domain-error';
import { pageWindow, totalPages } from '../common/dto/pagination';
import { Db, Sql, Transaction } from '../database/sql';
import { Transactions } from '../database/transactions';
import { OrganizationEvent, OrganizationEvents } from '../events/organization-events';
import { ExportedFlagDto, ImportReportDto } from '../flags/dto/flag-transfer.dto';
import { FlagTransferService } from '../flags/flag-transfer.service';
import { FlagWrite, FlagWriter } from '../flags/flag-writer';
import { FlagsRepository } from '../flags/flags.repository';
import { MAX_SCHEDULE_AHEAD_MS } from '../flags/schedules/flag-schedule';
import { OrganizationsErrors } from '../organizations/organizations.errors';
import { OrganizationsRepository } from '../organizations/organizations.repository';
import { ReviewSettings } from '../review/review-settings.repository';
import { WebhookEventType } from '../webhooks/webhook-event';
import { WebhookEvents } from '../webhooks/webhook-events';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { Action, Actor, decide, RequestFacts } from './change-request-state';
import { ChangeRequestMail } from './change-request-mail';
import {
  ApplyChangeRequestDto,
  ChangeRequestDto,
  ChangeRequestPageDto,
  CreateChangeRequestDto,
  CreateReviewDto,
  ListChangeRequestsQueryDto,
  StaleFlagDto,
  UpdateChangeRequestDto,
} from './dto/change-request.dto';
import { ChangeRequestsErrors } from './change-requests.errors';
import { Proposed, staleOf, validChanges, withBefore } from './change-request-changes';
import { ActorRef, ChangeRequestRow, ChangeRequestsRepository } from './change-requests.repository';

/**
 * Change requests (decisions.md, "Change requests (turn 5)"): proposed end states of flags, reviewed, then applied
 * through the one audited write path. Each command runs in one transaction that row-locks the request (after the
 * organization's row, the lock order of every flag write), so edits, reviews and applies of one request take turns;
 * who may do what is the state machine's (change-request-state.ts).
 */
@Injectable()
export class ChangeRequestsService {
  constructor(
    private readonly sql: Sql,
    private readonly transactions: Transactions,
    private readonly requests: ChangeRequestsRepository,
    private readonly flags: FlagsRepository,
    private readonly organizations: OrganizationsRepository,
    private readonly transfers: FlagTransferService,
    private readonly writer: FlagWriter,
    private readonly reviewSettings: ReviewSettings,
    private readonly events: OrganizationEvents,
    private readonly mail: ChangeRequestMail,
    private readonly webhooks: WebhookEvents,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(CLOCK) private readonly clock: Clock,
  ) {
    transfers.requestReviewsWith((tx, author, request) => this.createFromImport(tx, author, request));
  }

  async create(principal: Principal, dto: CreateChangeRequestDto): Promise<ChangeRequestDto> {
    const proposed = await validChanges(dto.changes);
    const applyAt = this.applyAtOf(dto.applyAt) ?? null;
    const id = await this.transactions.run((tx) =>
      this.createIn(tx, principal, { title: dto.title, description: dto.description ?? null, applyAt }, proposed),
    );
    this.announce(principal.organizationId, id);
    return this.get(principal.organizationId, id);
  }

  /** A request made of an import (`requestReview: true`), in the import's transaction: what it would change, its report attached. */
  private async createFromImport(
    tx: Transaction,
    principal: Principal,
    request: { title?: string; description?: string; entries: ExportedFlagDto[]; report: ImportReportDto },
  ): Promise<{ body: ChangeRequestDto; event: OrganizationEvent }> {
    const proposed = request.entries.map(({ key, ...after }) => ({ key, after }));
    const title = request.title ?? `Import of ${proposed.length} flag${proposed.length === 1 ? '' : 's'}`;
    const fields = { title, description: request.description ?? null, applyAt: null, importReport: request.report };
    const id = await this.createIn(tx, principal, fields, proposed);
    // Told by FlagWriter once the import's transaction commits.
    return { body: await this.read(tx, principal.organizationId, id), event: { type: 'change-requests', ids: [id] } };
  }

  private async createIn(
    tx: Transaction,
    principal: Principal,
    fields: { title: string; description: string | null; applyAt: Date | null; importReport?: ImportReportDto },
    proposed: readonly Proposed[],
  ): Promise<string> {
    const organizationId = principal.organizationId;
    const author = await this.actorRef(tx, principal);
    const changes = withBefore(proposed, await this.flags.all(tx, organizationId));
    const at = this.now();
    const row = await this.requests.insert(tx, organizationId, { ...fields, author, at });
    await this.requests.replaceChanges(tx, row.id, changes);
    await this.requests.appendEvent(tx, row.id, 'opened', author, at);
    await this.mail.opened(tx, organizationId, row.id, fields.title, author);
    const request = { id: row.id, title: fields.title, author, keys: proposed.map((change) => change.key) };
    await this.webhookEvent(tx, organizationId, 'change-request.opened', request, 'open', author);
    return row.id;
  }

  async list(principal: Principal, query: ListChangeRequestsQueryDto): Promise<ChangeRequestPageDto> {
    const organizationId = principal.organizationId;
    // Keys never review and viewers may not: nothing waits for them.
    const reviewer = principal.type === 'session' && principal.role !== 'viewer';
    if (query.awaitingMe === true && !reviewer) return { results: [], total: 0, page: query.page, totalPages: 0 };
    const awaiting =
      query.awaitingMe === true
        ? { userId: principal.id, selfApproval: (await this.reviewSettings.settingOf(this.sql, organizationId)).selfApproval }
        : undefined;
    const { rows, total } = await this.requests.list(this.sql, organizationId, { state: query.state, awaiting }, pageWindow(query));
    return {
      results: rows.map((row) => ({
        id: row.id,
        title: row.title,
        description: row.description,
        state: row.state,
        author: authorOf(row),
        keys: row.keys,
        approvals: row.approvals,
        applyAt: iso(row.applyAt),
        createdAt: row.createdAt.toISOString(),
        updatedAt: row.updatedAt.toISOString(),
        appliedAt: iso(row.appliedAt),
      })),
      total,
      page: query.page,
      totalPages: totalPages(total, query.limit),
    };
  }

  get(organizationId: string, id: string): Promise<ChangeRequestDto> {
    return this.read(this.sql, organizationId, id);
  }

  /** The whole request as read on `db` (a transaction that just made it, or autocommit). */
  private async read(db: Db, organizationId: string, id: string): Promise<ChangeRequestDto> {
    const row = await this.requests.find(db, organizationId, id);
    if (!row) throw ChangeRequestsErrors.notFound(id);
    const [changes, reviews, events, setting] = await Promise.all([
      this.requests.changesOf(db, id),
      this.requests.reviewsOf(db, id, row.revision),
      this.requests.eventsOf(db, id),
      this.reviewSettings.settingOf(db, organizationId),
    ]);
    return {
      id: row.id,
      title: row.title,
      description: row.description,
      state: row.state,
      author: authorOf(row),
      changes: changes.map((change) => ({
        key: change.key,
        flagId: change.flagId,
        before: change.before,
        after: change.after,
        version: change.version,
      })),
      reviews: reviews.map((review) => ({
        user: { id: review.userId, name: review.userName },
        decision: review.decision,
        comment: review.comment,
        at: review.createdAt.toISOString(),
      })),
      approvalsNeeded: setting.approvals,
      applyAt: iso(row.applyAt),
      createdAt: row.createdAt.toISOString(),
      updatedAt: row.updatedAt.toISOString(),
      appliedAt: iso(row.appliedAt),
      override: row.overrideReason === null ? null : { reason: row.overrideReason },
      failureReason: row.failureReason,
      importReport: row.importReport,
      timeline: events.map((event) => ({
        kind: event.kind,
        actor: { type: event.actorType, id: event.actorId, name: event.actorName },
        at: event.createdAt.toISOString(),
        ...(event.details?.reason !== undefined ? { reason: event.details.reason } : {}),
        ...(event.details?.override ? { override: true } : {}),
      })),
    };
  }

  /** Replaces what the body sends (the changes: all of them, their `before` read again), clears the approvals, records the edit. */
  async update(principal: Principal, id: string, dto: UpdateChangeRequestDto): Promise<ChangeRequestDto> {
    const proposed = dto.changes === undefined ? undefined : await validChanges(dto.changes);
    const applyAt = this.applyAtOf(dto.applyAt);
    const organizationId = principal.organizationId;
    await this.transactions.run(async (tx) => {
      const { row } = await this.decided(tx, principal, id, { kind: 'edit' });
      const at = this.now();
      if (proposed !== undefined) await this.requests.replaceChanges(tx, id, withBefore(proposed, await this.flags.all(tx, organizationId)));
      await this.requests.update(tx, id, {
        title: dto.title,
        description: dto.description,
        state: 'open',
        revision: row.revision + 1,
        applyAt,
        updatedAt: at,
      });
      await this.requests.appendEvent(tx, id, 'edited', await this.actorRef(tx, principal), at);
    });
    this.announce(organizationId, id);
    return this.get(organizationId, id);
  }

  async review(principal: Principal, id: string, dto: CreateReviewDto): Promise<ChangeRequestDto> {
    const due = await this.transactions.run(async (tx) => {
      const { row, next } = await this.decided(tx, principal, id, { kind: 'review', decision: dto.decision });
      const at = this.now();
      const actor = await this.actorRef(tx, principal);
      await this.requests.insertReview(tx, id, row.revision, {
        userId: principal.id,
        userName: actor.name ?? '',
        decision: dto.decision,
        comment: dto.comment ?? null,
        at,
      });
      await this.requests.update(tx, id, { state: next, updatedAt: at });
      await this.requests.appendEvent(
        tx,
        id,
        dto.decision === 'approve' ? 'approved' : 'declined',
        actor,
        at,
        dto.comment ? { reason: dto.comment } : null,
      );
      if (next !== row.state && (next === 'approved' || next === 'declined')) {
        await this.mail.toAuthor(tx, principal.organizationId, id, row.title, authorOf(row), { kind: next, by: actor, comment: dto.comment });
        const request = { id, title: row.title, author: authorOf(row), keys: await this.keysOf(tx, id) };
        await this.webhookEvent(tx, principal.organizationId, `change-request.${next}`, request, next, actor, dto.comment);
      }
      return next === 'approved' ? row.applyAt : null;
    });
    // Approved with a time set (perhaps already past: then at once): the scheduler learns of it without waiting for its next read.
    if (due !== null) this.whenDue?.(due);
    this.announce(principal.organizationId, id);
    return this.get(principal.organizationId, id);
  }

  async withdraw(principal: Principal, id: string): Promise<ChangeRequestDto> {
    await this.transactions.run(async (tx) => {
      await this.decided(tx, principal, id, { kind: 'withdraw' });
      const at = this.now();
      await this.requests.update(tx, id, { state: 'withdrawn', updatedAt: at });
      await this.requests.appendEvent(tx, id, 'withdrawn', await this.actorRef(tx, principal), at);
    });
    this.announce(principal.organizationId, id);
    return this.get(principal.organizationId, id);
  }

  /**
   * Writes every change in one transaction through the one audited write path (one FlagWrite of several changes, as
   * the import), the applier as actor and the request in each entry's context. Nothing is written when a flag moved
   * on since the request was made (409 CHANGE_REQUEST_STALE) or the organization's rules refuse a change (409
   * CHANGE_REQUEST_REFUSED, the import's report).
   */
  async apply(principal: Principal, id: string, dto: ApplyChangeRequestDto): Promise<ChangeRequestDto> {
    const organizationId = principal.organizationId;
    const actor: AuditActor = { actorType: principal.type, actorId: principal.id };
    await this.writer.write(actor, async (tx) =>
      this.applyIn(tx, organizationId, id, actorOf(principal), await this.actorRef(tx, principal), dto.override),
    );
    this.announce(organizationId, id);
    return this.get(organizationId, id);
  }

  /**
   * The scheduled apply of one due request (ChangeRequestScheduler), in the caller's transaction: claimed by taking its
   * organization's row and then its own and finding it still approved and due (another instance may have applied it
   * meanwhile: then nothing happens). Applied as `system`; when a flag moved on or the rules refuse a change, nothing
   * is written and the request fails with the reason. Null when there was nothing to do.
   */
  async applyDue(
    tx: Transaction,
    candidate: { id: string; organizationId: string },
    now: Date,
  ): Promise<{ state: 'applied' | 'failed'; write: FlagWrite<null> | null; reason?: string } | null> {
    const { id, organizationId } = candidate;
    if (!(await this.organizations.lockOrganization(tx, organizationId))) return null;
    const row = await this.requests.findForUpdate(tx, organizationId, id);
    if (!row || row.state !== 'approved' || row.applyAt === null || row.applyAt.getTime() > now.getTime()) return null;
    try {
      const write = await this.writer.record(tx, SYSTEM_ACTOR, (tx) => this.applyIn(tx, organizationId, id, SYSTEM, SYSTEM_REF));
      return { state: 'applied', write };
    } catch (error) {
      // A refusal (stale, or the rules), raised before anything was written: the request fails, and only it changes.
      if (!(error instanceof DomainError)) throw error;
      const reason = failureOf(error);
      const at = this.now();
      await this.requests.update(tx, id, { state: 'failed', failureReason: reason, updatedAt: at });
      await this.requests.appendEvent(tx, id, 'failed', SYSTEM_REF, at, { reason });
      await this.mail.toAuthor(tx, organizationId, id, row.title, authorOf(row), { kind: 'failed', reason });
      const request = { id, title: row.title, author: authorOf(row), keys: await this.keysOf(tx, id) };
      await this.webhookEvent(tx, organizationId, 'change-request.failed', request, 'failed', SYSTEM_REF, reason);
      return { state: 'failed', write: null, reason };
    }
  }

  /** Told when a request becomes approved with an `applyAt` (ChangeRequestScheduler listens). */
  whenDue?: (at: Date) => void;

  /**
   * Every change in `tx`, as one FlagWrite by `actor` naming the request; nothing when a flag moved on since the request
   * was made (CHANGE_REQUEST_STALE) or the organization's rules refuse a change (CHANGE_REQUEST_REFUSED).
   */
  private async applyIn(
    tx: Transaction,
    organizationId: string,
    id: string,
    actor: Actor,
    actorRef: ActorRef,
    override?: { reason: string },
  ): Promise<FlagWrite<null>> {
    const { row } = await this.decidedFor(tx, organizationId, actor, id, override ? { kind: 'override' } : { kind: 'apply' });
    const changes = await this.requests.changesOf(tx, id);
    const current = await this.flags.all(tx, organizationId, 'FOR UPDATE');
    const stale = staleOf(changes, current);
    if (stale.length > 0) throw ChangeRequestsErrors.stale(stale);
    const entries: ExportedFlagDto[] = changes.filter((change) => change.after !== null).map((change) => ({ key: change.key, ...change.after! }));
    const deletions = changes.filter((change) => change.after === null).map((change) => change.key);
    const plan = await this.transfers.plan(tx, organizationId, entries, deletions);
    if (plan.report.refused.length > 0) throw ChangeRequestsErrors.orgRefused(plan.report);
    const written = await plan.run();
    const at = this.now();
    await this.requests.update(tx, id, { state: 'applied', appliedAt: at, overrideReason: override?.reason, updatedAt: at });
    await this.requests.appendEvent(tx, id, 'applied', actorRef, at, override ? { reason: override.reason, override: true } : null);
    await this.mail.toAuthor(tx, organizationId, id, row.title, authorOf(row), { kind: 'applied', by: actorRef, override: override?.reason });
    const request = { id, title: row.title, author: authorOf(row), keys: changes.map((change) => change.key) };
    await this.webhookEvent(tx, organizationId, 'change-request.applied', request, 'applied', actorRef, override?.reason);
    return new FlagWrite(null, written).because(override ? { changeRequestId: id, override: { reason: override.reason } } : { changeRequestId: id });
  }

  /**
   * The request row-locked (after the organization's row, the order of every flag write), and what the state machine
   * says of `action` by the caller: a 404, 403 or 409 when it refuses.
   */
  private decided(
    tx: Transaction,
    principal: Principal,
    id: string,
    action: Action,
  ): Promise<{ row: ChangeRequestRow; next: RequestFacts['state'] }> {
    return this.decidedFor(tx, principal.organizationId, actorOf(principal), id, action);
  }

  private async decidedFor(
    tx: Transaction,
    organizationId: string,
    actor: Actor,
    id: string,
    action: Action,
  ): Promise<{ row: ChangeRequestRow; next: RequestFacts['state'] }> {
    if (!(await this.organizations.lockOrganization(tx, organizationId))) throw OrganizationsErrors.organizationDeleted();
    const row = await this.requests.findForUpdate(tx, organizationId, id);
    if (!row) throw ChangeRequestsErrors.notFound(id);
    const [reviews, setting] = await Promise.all([this.requests.reviewsOf(tx, id, row.revision), this.reviewSettings.settingOf(tx, organizationId)]);
    const facts: RequestFacts = { state: row.state, author: { type: row.authorType, id: row.authorId }, revision: row.revision, reviews };
    const decision = decide(facts, actor, action, setting);
    if (!decision.allowed) throw ChangeRequestsErrors.refused(decision.code, decision.reason);
    return { row, next: decision.next };
  }

  private async actorRef(db: Db, principal: Principal): Promise<ActorRef> {
    return { type: principal.type, id: principal.id, name: await actorName(db, principal.organizationId, principal.type, principal.id) };
  }

  /** The webhook event of a step of the request, in its transaction (WebhookEvents: only when an endpoint wants it). */
  private async webhookEvent(
    tx: Transaction,
    organizationId: string,
    type: Extract<WebhookEventType, `change-request.${string}`>,
    request: { id: string; title: string; author: ActorRef; keys: string[] },
    state: string,
    actor: ActorRef,
    comment?: string,
  ): Promise<void> {
    await this.webhooks.changeRequest(tx, organizationId, type, {
      id: request.id,
      title: request.title,
      state,
      author: { id: request.author.id, name: request.author.name },
      flagKeys: request.keys,
      url: `${this.config.urls.publicUrl}/console/change-requests/${encodeURIComponent(request.id)}?org=${organizationId}`,
      actor: { type: actor.type, id: actor.id, name: actor.name },
      ...(comment ? { comment } : {}),
    });
  }

  private async keysOf(tx: Transaction, id: string): Promise<string[]> {
    return (await this.requests.changesOf(tx, id)).map((change) => change.key);
  }

  /** Tells the organization's consoles that the request changed (after the commit). */
  announce(organizationId: string, id: string): void {
    this.events.announce(organizationId, { type: 'change-requests', ids: [id] });
  }

  private now(): Date {
    return new Date(this.clock.now());
  }

  /** `applyAt` as sent (undefined: not sent; null: none), held to the future and at most a year ahead by this clock. */
  private applyAtOf(applyAt: string | null | undefined): Date | null | undefined {
    if (applyAt === undefined || applyAt === null) return applyAt;
    const at = new Date(applyAt);
    const now = this.clock.now();
    if (at.getTime() <= now) throw ChangeRequestsErrors.invalid(`applyAt must be in the future (it is ${new Date(now).toISOString()} now)`);
    if (at.getTime() > now + MAX_SCHEDULE_AHEAD_MS) throw ChangeRequestsErrors.invalid('applyAt must be at most one year ahead');
    return at;
  }
}

const SYSTEM: Actor = { type: 'system', id: null };
const SYSTEM_ACTOR: AuditActor = { actorType: 'system', actorId: null };
const SYSTEM_REF: ActorRef = { type: 'system', id: null, name: null };

/** Why a scheduled apply was refused, as the request keeps it: the message, and which flags when it says. */
function failureOf(error: DomainError): string {
  const details = (error as DomainError & { responseDetails?: { stale?: StaleFlagDto[]; refused?: { key: string; reason: string }[] } })
    .responseDetails;
  const flags =
    details?.stale?.map((flag) => `${flag.key} (${flag.fields.join(', ')})`) ?? details?.refused?.map((flag) => `${flag.key}: ${flag.reason}`);
  return `${error.code}: ${error.message}${flags && flags.length > 0 ? ` — ${flags.join('; ')}` : ''}`.slice(0, 2000);
}

function actorOf(principal: Principal): Actor {
  return principal.type === 'session' ? { type: 'session', id: principal.id, role: principal.role } : { type: 'apiKey', id: principal.id };
}

function authorOf(row: ChangeRequestRow): ActorRef {
  return { type: row.authorType, id: row.authorId, name: row.authorName };
}

function iso(date: Date | null): string | null {
  return date === null ? null : date.toISOString();
}
