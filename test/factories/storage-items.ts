import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import { Type } from '@nestjs/common';
import { Sql } from '../../src/database/sql';
import { OBJECT_STORE, ObjectStore, objectKeyFor } from '../../src/storage/object-store/object-store';
import { StorageItem } from '../../src/storage/items/storage-item';
import { kindOfContentType } from '../../src/storage/items/storage-kind';
import { StorageRepository } from '../../src/storage/items/storage.repository';
import { ServiceTestContext } from '../support/service-module';

/**
 * Storage items written as the upload paths write them (the repository's own statements), for the service tier,
 * where there is no upload host to send bytes to: a complete file (its bytes in the object store too, unless
 * told otherwise) or a pending item whose signed URL expires at a given time.
 */
export function storageItems(s: ServiceTestContext) {
  const repository = s.get(StorageRepository);
  const sql = s.get(Sql);
  const store = s.get(OBJECT_STORE as unknown as Type<ObjectStore>);
  const newItem = (organizationId: string, size: number, contentType: string) => {
    const id = randomUUID();
    return {
      id,
      organizationId,
      kind: kindOfContentType(contentType),
      size,
      contentType,
      metadata: null,
      objectKey: objectKeyFor(organizationId, id),
    };
  };

  return {
    store,
    async complete(organizationId: string, size: number, contentType = 'image/png', { bytes = true } = {}): Promise<StorageItem> {
      const item = newItem(organizationId, size, contentType);
      if (bytes) await store.put(item.objectKey, Readable.from([Buffer.alloc(size, 1)]), size);
      return repository.createComplete(sql, item, 'a'.repeat(64));
    },
    pending(organizationId: string, size: number, expiresInMs: number, contentType = 'image/png'): Promise<StorageItem> {
      return repository.createPending(sql, newItem(organizationId, size, contentType), new Date(Date.now() + expiresInMs));
    },
    /** Whether the object store holds the item's bytes. */
    async hasBytes(item: Pick<StorageItem, 'objectKey'>): Promise<boolean> {
      const body = await store.read(item.objectKey);
      body?.destroy();
      return body !== null;
    },
  };
}
