import { Inject, Injectable, Logger } from '@nestjs/common';
import { AuthErrors } from '../auth/auth.errors';
import { SessionPrincipal } from '../auth/principal';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { Db, Sql, Transaction } from '../database/sql';
import { Transactions } from '../database/transactions';
import { InvalidationBus } from '../invalidation/invalidation-bus';
import { OrganizationsErrors } from '../organizations/organizations.errors';
import { OrganizationsRepository } from '../organizations/organizations.repository';
import { OrganizationsService } from '../organizations/organizations.service';
import { SessionOrganizationDto } from '../people/dto/people.dto';
import { MembershipsRepository } from '../people/memberships.repository';
import { UsersRepository } from '../people/users.repository';
import { CreateOwnOrganizationDto, OrganizationCreationDto, RenameOrganizationDto } from './dto/own-organization.dto';
import { CreationRefusal, OwnOrganizationsErrorCode, OwnOrganizationsErrors } from './own-organizations.errors';
import { OwnOrganizationsRepository } from './own-organizations.repository';

/**
 * Organizations made by the people who use them (decisions.md, "A studio's own deployment"): a signed-in user creates
 * one, as its admin, when ORGANIZATION_CREATION lets them and they have made fewer than ORGANIZATIONS_PER_USER; its
 * admins rename it, and delete it once it has no flags and no files. It starts as the admin API starts one
 * (OrganizationsService.createIn: the default storage allocation, no subscription, so the free flag allowance).
 *
 * Each user's creates are judged one after the other under their user row's lock, so that a burst cannot pass the
 * limit; a delete takes the organization's row lock, which every flag create takes first, so that a create racing
 * the delete either commits before it (and the delete answers 409) or finds no organization (and creates nothing).
 * After a commit, the invalidation bus has every instance re-read the sessions of whoever joined or lost the
 * organization, and drop the keys of a deleted one.
 */
@Injectable()
export class OwnOrganizationsService {
  private readonly logger = new Logger(OwnOrganizationsService.name);

  constructor(
    private readonly sql: Sql,
    private readonly transactions: Transactions,
    private readonly organizations: OrganizationsService,
    private readonly organizationRows: OrganizationsRepository,
    private readonly users: UsersRepository,
    private readonly memberships: MembershipsRepository,
    private readonly repository: OwnOrganizationsRepository,
    private readonly bus: InvalidationBus,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** What the session body shows, so that the console offers "New organization" only when it would work. */
  async creationFor(db: Db, userId: string): Promise<OrganizationCreationDto> {
    const { refusal, created } = await this.judge(db, userId);
    return { allowed: refusal === null, reason: refusal, created, limit: this.config.organizationCreation.perUser };
  }

  async create(userId: string, dto: CreateOwnOrganizationDto): Promise<SessionOrganizationDto> {
    const { organization, joined } = await this.transactions.run(async (tx) => {
      // A dead user has no live session; the lock serializes this user's creates (see the class comment).
      if (!(await this.users.lock(tx, userId))) throw AuthErrors.notSignedIn();
      const { refusal } = await this.judge(tx, userId);
      if (refusal !== null) throw OwnOrganizationsErrors.refused(refusal, this.config.organizationCreation.perUser);
      if (dto.copyMembersFrom !== undefined) await this.checkAdministers(tx, userId, dto.copyMembersFrom);
      const created = await this.organizations.createIn(tx, dto.name, userId);
      await this.memberships.add(tx, created.id, userId, 'admin');
      const copied = dto.copyMembersFrom === undefined ? [] : await this.repository.copyMembers(tx, dto.copyMembersFrom, created.id, userId);
      return { organization: created, joined: [userId, ...copied] };
    });
    for (const member of joined) this.bus.publish('user', member);
    this.logger.log(
      `organization ${organization.id} created by user ${userId}` +
        (dto.copyMembersFrom === undefined ? '' : ` with ${joined.length - 1} members of ${dto.copyMembersFrom}`),
    );
    return { id: organization.id, name: organization.name, role: 'admin' };
  }

  async rename(principal: SessionPrincipal, dto: RenameOrganizationDto): Promise<SessionOrganizationDto> {
    const renamed = await this.repository.rename(this.sql, principal.organizationId, dto.name);
    if (!renamed) throw OrganizationsErrors.organizationNotFound(principal.organizationId);
    return { id: renamed.id, name: renamed.name, role: principal.role };
  }

  async delete(principal: SessionPrincipal): Promise<void> {
    const organizationId = principal.organizationId;
    const { userIds, keyIds } = await this.transactions.run(async (tx) => {
      if (!(await this.organizationRows.lockOrganization(tx, organizationId))) throw OrganizationsErrors.organizationNotFound(organizationId);
      const { flags, files } = await this.repository.contents(tx, organizationId);
      if (flags > 0 || files > 0) throw OwnOrganizationsErrors.notEmpty(flags, files);
      const dependents = await this.repository.dependents(tx, organizationId);
      await this.repository.delete(tx, organizationId);
      return dependents;
    });
    // The rows are gone, so the change feed cannot tell of them: the bus does (keys refused, sessions re-read).
    for (const keyId of keyIds) this.bus.publish('apiKey', keyId);
    for (const userId of userIds) this.bus.publish('user', userId);
    this.logger.log(`organization ${organizationId} deleted by user ${principal.id}`);
  }

  private async judge(db: Db, userId: string): Promise<{ refusal: CreationRefusal | null; created: number }> {
    const { mode, perUser } = this.config.organizationCreation;
    const created = await this.repository.createdBy(db, userId);
    if (mode === 'off') return { refusal: OwnOrganizationsErrorCode.ORGANIZATION_CREATION_OFF, created };
    if (mode === 'admins' && (await this.memberships.adminOf(db, userId)).length === 0) {
      return { refusal: OwnOrganizationsErrorCode.ORGANIZATION_CREATION_ADMINS_ONLY, created };
    }
    if (created >= perUser) return { refusal: OwnOrganizationsErrorCode.ORGANIZATION_LIMIT, created };
    return { refusal: null, created };
  }

  /** Under the source's share lock, so that the members copied are those of one moment. */
  private async checkAdministers(tx: Transaction, userId: string, organizationId: string): Promise<void> {
    const exists = await this.repository.shareOrganization(tx, organizationId);
    const membership = exists ? await this.memberships.find(tx, organizationId, userId) : null;
    if (membership?.role !== 'admin') throw OwnOrganizationsErrors.copyMembersForbidden();
  }
}
