import { HttpStatus } from '@nestjs/common';
import { DomainError } from '../common/domain-error';

/** Every code a storage endpoint (API, upload host or CDN) answers with, in `{error: {code, message}}`. */
export enum StorageErrorCode {
  VALIDATION_ERROR = 'VALIDATION_ERROR',
  INVALID_UUID = 'INVALID_UUID',
  UNAUTHORIZED = 'UNAUTHORIZED',
  FORBIDDEN = 'FORBIDDEN',
  NOT_FOUND = 'NOT_FOUND',
  CONFLICT = 'CONFLICT',
  PAYLOAD_TOO_LARGE = 'PAYLOAD_TOO_LARGE',
  /** STORAGE_ENFORCE_ALLOCATION: the file would take the organization past its storageAllocation (413). */
  ALLOCATION_EXCEEDED = 'ALLOCATION_EXCEEDED',
  RANGE_NOT_SATISFIABLE = 'RANGE_NOT_SATISFIABLE',
  /** The body stalled: no byte of an upload for UPLOAD_IDLE_TIMEOUT_SECONDS (408). */
  REQUEST_TIMEOUT = 'REQUEST_TIMEOUT',
  /** From the body parser, before routing: a purge body that is not JSON. */
  UNSUPPORTED_MEDIA_TYPE = 'UNSUPPORTED_MEDIA_TYPE',
  RATE_LIMITED = 'RATE_LIMITED',
  INTERNAL_ERROR = 'INTERNAL_ERROR',
  SERVICE_UNAVAILABLE = 'SERVICE_UNAVAILABLE',
}

/** An organization's allocation and the bytes its complete files use plus those its pending items reserve. */
export interface AllocationUsage {
  allocation: number;
  reserved: number;
}

export const StorageErrors = {
  validation: (message: string) => new DomainError(HttpStatus.BAD_REQUEST, StorageErrorCode.VALIDATION_ERROR, message),
  invalidUuid: (name: string) => new DomainError(HttpStatus.BAD_REQUEST, StorageErrorCode.INVALID_UUID, `${name} must be a valid UUID`),
  itemNotFound: (itemId: string) => new DomainError(HttpStatus.NOT_FOUND, StorageErrorCode.NOT_FOUND, `Storage item ${itemId} not found`),
  fileNotFound: () => new DomainError(HttpStatus.NOT_FOUND, StorageErrorCode.NOT_FOUND, 'File not found'),
  organizationNotFound: (organizationId: string) =>
    new DomainError(
      HttpStatus.NOT_FOUND,
      StorageErrorCode.NOT_FOUND,
      `Organization ${organizationId} no longer exists (removed after this API key authenticated)`,
    ),
  uploadUrlInvalid: (reason: string) => new DomainError(HttpStatus.FORBIDDEN, StorageErrorCode.FORBIDDEN, `Upload URL rejected: ${reason}`),
  uploadUrlUsed: () =>
    new DomainError(HttpStatus.CONFLICT, StorageErrorCode.CONFLICT, 'This upload URL has already been used; request a new signed URL'),
  uploadTargetGone: (itemId: string) =>
    new DomainError(
      HttpStatus.NOT_FOUND,
      StorageErrorCode.NOT_FOUND,
      `Storage item ${itemId} no longer exists (deleted or purged); request a new signed URL`,
    ),
  /** Nobody reads this answer (the client is gone); it keeps an ordinary abort out of the 500 log. */
  uploadAborted: () => new DomainError(HttpStatus.BAD_REQUEST, StorageErrorCode.VALIDATION_ERROR, 'The client closed the connection mid-upload'),
  tooLarge: (limit: number, reason: string) =>
    new DomainError(HttpStatus.PAYLOAD_TOO_LARGE, StorageErrorCode.PAYLOAD_TOO_LARGE, `The file is larger than ${reason} (${limit} bytes)`),
  /** `requested` more bytes do not fit: `reserved` of `allocation` are used by complete files or reserved by pending ones. */
  allocationExceeded: (usage: AllocationUsage, requested: number) =>
    new DomainError(
      HttpStatus.PAYLOAD_TOO_LARGE,
      StorageErrorCode.ALLOCATION_EXCEEDED,
      `The file (${requested} bytes) does not fit in the organization's storage allocation: ${usage.reserved} of its ` +
        `${usage.allocation} bytes are used or reserved by pending uploads, ${Math.max(0, usage.allocation - usage.reserved)} left`,
    ),
  /** A non-allocated upload cut off as it streamed: its size is unknown, only that it passed the room left. */
  allocationRoomExceeded: (usage: AllocationUsage) =>
    new DomainError(
      HttpStatus.PAYLOAD_TOO_LARGE,
      StorageErrorCode.ALLOCATION_EXCEEDED,
      `The file is larger than the ${Math.max(0, usage.allocation - usage.reserved)} bytes left in the organization's ` +
        `storage allocation: ${usage.reserved} of its ${usage.allocation} bytes are used or reserved by pending uploads`,
    ),
  rangeNotSatisfiable: (size: number) =>
    new DomainError(
      HttpStatus.REQUESTED_RANGE_NOT_SATISFIABLE,
      StorageErrorCode.RANGE_NOT_SATISFIABLE,
      `The requested range is outside the file (${size} bytes)`,
    ),
};
