import { ApiProperty } from '@nestjs/swagger';
import { StorageErrorCode } from '../storage.errors';

export class StorageErrorDetailDto {
  @ApiProperty({ enum: StorageErrorCode }) code: StorageErrorCode;
  @ApiProperty({ description: 'What went wrong, naming the field or rule' }) message: string;
}

/** The body of every storage error (spec 7.2). */
export class StorageErrorDto {
  @ApiProperty({ type: StorageErrorDetailDto }) error: StorageErrorDetailDto;
}
