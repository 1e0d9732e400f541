import { OrganizationEvents } from '../../events/organization-events';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { CLOCK, Clock } from '../../common/clock';
import { totalPages } from '../../common/dto/pagination';
import { APP_CONFIG, AppConfig } from '../../config/app-config';
import { Sql } from '../../database/sql';
import { OrganizationsRepository } from '../../organizations/organizations.repository';
import { mediaUrl } from '../cdn/media-url';
import { OBJECT_STORE, ObjectStore, objectKeyFor } from '../object-store/object-store';
import { SignedUrlDto, SignedUrlQueryDto } from '../signed-urls/dto/signed-url.dto';
import { SignedUrls, UPLOAD_URL_LIFETIME_MS } from '../signed-urls/signed-urls';
import { StorageErrors } from '../storage.errors';
import { ListItemsQueryDto, StorageItemPageDto } from './dto/list-items.dto';
import { dryRunPurgeMessage, MessageDto, PurgeDto, PurgeResultDto } from './dto/purge.dto';
import { StorageItemDto } from './dto/storage-item.dto';
import { StorageStatsDto } from './dto/storage-stats.dto';
import { StorageAllocation } from './storage-allocation';
import { kindOfContentType, normalizeContentType, STORAGE_KINDS } from './storage-kind';
import { parseMetadata } from './storage-metadata';
import { StorageRepository } from './storage.repository';
import { Transactions } from '../../database/transactions';
import { WebhookEvents } from '../../webhooks/webhook-events';

/**
 * The /v1/storage API: signed URLs, the item list, statistics, delete and purge.
 *
 * Delete and purge remove the row first and the bytes after. The row is what makes a file exist (the CDN
 * and the list read it), so the file disappears at once; if the process dies, or the store fails, between
 * the two steps, the bytes are left without a row and the sweeper's orphan pass removes them. The other
 * order could leave a row whose bytes are gone: a listed file that the CDN cannot serve.
 */
@Injectable()
export class StorageService {
  private readonly logger = new Logger(StorageService.name);

  constructor(
    private readonly sql: Sql,
    private readonly repository: StorageRepository,
    private readonly organizations: OrganizationsRepository,
    private readonly signedUrls: SignedUrls,
    @Inject(OBJECT_STORE) private readonly store: ObjectStore,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly allocation: StorageAllocation,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly events: OrganizationEvents,
    private readonly transactions: Transactions,
    private readonly webhooks: WebhookEvents,
  ) {}

  async createSignedUrl(organizationId: string, query: SignedUrlQueryDto): Promise<SignedUrlDto> {
    const expiresAt = Math.floor((this.clock.now() + UPLOAD_URL_LIFETIME_MS) / 1000);
    const { contentType, size, metadata, fileName } = query;
    if (contentType === undefined && size === undefined) {
      if (metadata !== undefined) {
        throw StorageErrors.validation(
          'metadata requires contentType and size (pre-allocated mode); in the non-allocated mode send it as the multipart field metadata',
        );
      }
      if (fileName !== undefined) {
        throw StorageErrors.validation(
          "fileName requires contentType and size (pre-allocated mode); in the non-allocated mode the file part's filename names the file",
        );
      }
      const nonce = randomUUID();
      const url = this.signedUrls.nonAllocatedUrl({ organizationId, nonce, expiresAt });
      return { url, expiresAt: new Date(expiresAt * 1000).toISOString() };
    }
    if (contentType === undefined || size === undefined) {
      throw StorageErrors.validation('contentType and size must be given together (pre-allocated mode) or not at all');
    }
    const normalizedType = normalizeContentType(contentType);
    if (!normalizedType)
      throw StorageErrors.validation('contentType must be a MIME type such as image/png (quoted parameter values may hold visible ASCII only)');
    const maxBytes = this.config.storage.maxUploadBytes;
    if (size > maxBytes) throw StorageErrors.tooLarge(maxBytes, 'MAX_UPLOAD_BYTES');
    let parsedMetadata = null;
    if (metadata !== undefined) {
      const result = parseMetadata(metadata);
      if (!result.ok) throw StorageErrors.validation(result.message);
      parsedMetadata = result.metadata;
    }

    const mediaId = randomUUID();
    // With STORAGE_ENFORCE_ALLOCATION, the pending item reserves its declared size, if it fits (413 if not).
    await this.allocation.withinAllocation(organizationId, size, (db) =>
      this.repository.createPending(
        db,
        {
          id: mediaId,
          organizationId,
          kind: kindOfContentType(normalizedType),
          size,
          contentType: normalizedType,
          metadata: parsedMetadata,
          fileName: fileName ?? null,
          objectKey: objectKeyFor(organizationId, mediaId),
        },
        new Date(expiresAt * 1000),
      ),
    );
    return {
      url: this.signedUrls.preallocatedUrl({ organizationId, mediaId, size, contentType: normalizedType, expiresAt }),
      expiresAt: new Date(expiresAt * 1000).toISOString(),
      mediaId,
      mediaUrl: mediaUrl(this.config.urls.cdnUrl, organizationId, mediaId),
    };
  }

  async listItems(organizationId: string, query: ListItemsQueryDto): Promise<StorageItemPageDto> {
    const { page, limit, kind } = query;
    const { items, total } = await this.repository.listItems(this.sql, organizationId, kind, (page - 1) * limit, limit);
    return { items: items.map(StorageItemDto.from), total, page, limit, totalPages: totalPages(total, limit) };
  }

  async statistics(organizationId: string): Promise<StorageStatsDto> {
    const [organization, usage] = await Promise.all([
      this.organizations.findOrganization(this.sql, organizationId),
      this.repository.usageByKind(this.sql, organizationId),
    ]);
    // The key authenticated a moment ago, so the organization exists unless it was removed in between.
    if (!organization) throw StorageErrors.organizationNotFound(organizationId);
    const breakdown = STORAGE_KINDS.map((kind) => {
      const found = usage.find((entry) => entry.kind === kind);
      return { kind, count: found?.count ?? 0, size: found?.size ?? 0 };
    });
    const usedStorage = breakdown.reduce((sum, entry) => sum + entry.size, 0);
    const totalStorage = organization.storageAllocation;
    return { totalStorage, usedStorage, overageStorage: Math.max(0, usedStorage - totalStorage), breakdown };
  }

  async deleteItem(organizationId: string, itemId: string): Promise<MessageDto> {
    const objectKey = await this.transactions.run(async (tx) => {
      const deleted = await this.repository.deleteItem(tx, organizationId, itemId);
      if (deleted !== null) await this.webhooks.storageChanged(tx, organizationId, { ids: [itemId], change: 'deleted' });
      return deleted;
    });
    if (objectKey === null) throw StorageErrors.itemNotFound(itemId);
    this.events.announce(organizationId, { type: 'storage', ids: [itemId], change: 'deleted' });
    await this.deleteObjects([objectKey]);
    return { message: `Storage item ${itemId} deleted` };
  }

  async purge(organizationId: string, dto: PurgeDto): Promise<PurgeResultDto> {
    const filter = {
      kind: dto.kind,
      before: dto.before === undefined ? undefined : new Date(dto.before),
      after: dto.after === undefined ? undefined : new Date(dto.after),
    };
    if (dto.dryRun) {
      const count = await this.repository.countItems(this.sql, organizationId, filter);
      return { message: dryRunPurgeMessage(count), purgedCount: count, dryRun: true };
    }
    const deleted = await this.transactions.run(async (tx) => {
      const items = await this.repository.deleteItems(tx, organizationId, filter);
      await this.webhooks.storageChanged(tx, organizationId, { ids: items.map((item) => item.id), change: 'purged' });
      return items;
    });
    this.events.announce(organizationId, { type: 'storage', ids: deleted.map((item) => item.id), change: 'purged' });
    await this.deleteObjects(deleted.map((item) => item.objectKey));
    return { message: `Purged ${deleted.length} item(s)`, purgedCount: deleted.length, dryRun: false };
  }

  /** After the rows are gone: a failure here only delays the removal of bytes until the next sweep. */
  private async deleteObjects(objectKeys: string[]): Promise<void> {
    const failures: string[] = [];
    for (let i = 0; i < objectKeys.length; i += 16) {
      await Promise.all(
        objectKeys.slice(i, i + 16).map((key) => this.store.delete(key).catch((error: Error) => failures.push(`${key}: ${error.message}`))),
      );
    }
    if (failures.length > 0) {
      this.logger.warn(`${failures.length} object(s) left for the sweeper: ${failures.slice(0, 5).join('; ')}`);
    }
  }
}
