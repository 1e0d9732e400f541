import { applyDecorators, HttpStatus } from '@nestjs/common';
import { ApiExtraModels, ApiResponse } from '@nestjs/swagger';
import { StorageErrorDto } from './dto/storage-error.dto';

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
    ...statuses.map(([status, description]) =>
      ApiResponse({ status, type: StorageErrorDto, description: description ?? DESCRIPTIONS[status] }),
    ),
  );
}
