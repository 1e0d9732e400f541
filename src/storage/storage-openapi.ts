import { applyDecorators, HttpStatus } from '@nestjs/common';
import { ApiExtraModels, ApiProperty, ApiResponse } from '@nestjs/swagger';
import { RequirePermission } from '../auth/auth.decorators';
import { Permission } from '../auth/permission';
import { StorageErrorCode } from './storage.errors';

export class StorageErrorDetailDto {
  @ApiProperty({ enum: StorageErrorCode }) code: StorageErrorCode;
  @ApiProperty({ description: 'What went wrong, naming the field or rule' }) message: string;
}

/** The body of every storage error: the storage API, the upload host and the CDN. */
export class StorageErrorDto {
  @ApiProperty({ type: StorageErrorDetailDto }) error: StorageErrorDetailDto;
}

const DESCRIPTIONS: Partial<Record<HttpStatus, string>> = {
  [HttpStatus.BAD_REQUEST]: 'VALIDATION_ERROR (or INVALID_UUID for a malformed file id)',
  [HttpStatus.UNAUTHORIZED]: 'UNAUTHORIZED: missing, unknown or revoked API key',
  [HttpStatus.FORBIDDEN]: 'FORBIDDEN',
  [HttpStatus.NOT_FOUND]: 'NOT_FOUND',
  [HttpStatus.CONFLICT]: 'CONFLICT',
  [HttpStatus.PAYLOAD_TOO_LARGE]: 'PAYLOAD_TOO_LARGE',
  [HttpStatus.REQUESTED_RANGE_NOT_SATISFIABLE]: 'RANGE_NOT_SATISFIABLE',
};

/** Documents the listed error statuses with the storage error body `{error: {code, message}}`. */
export function ApiStorageErrors(...statuses: Array<[HttpStatus, string?]>) {
  return applyDecorators(
    ApiExtraModels(StorageErrorDto),
    ...statuses.map(([status, description]) => ApiResponse({ status, type: StorageErrorDto, description: description ?? DESCRIPTIONS[status] })),
  );
}

/** RequirePermission for a storage route: its 401 and 403 in the storage error shape. */
export function RequireStoragePermission(permission: Permission) {
  return applyDecorators(
    ApiExtraModels(StorageErrorDto),
    RequirePermission(permission, {
      type: StorageErrorDto,
      unauthorized: 'UNAUTHORIZED: missing, unknown or revoked API key',
      forbidden: `FORBIDDEN: the API key lacks ${permission}`,
    }),
  );
}
