import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsEnum, IsInt, IsOptional, Max, Min } from 'class-validator';
import { MAX_PAGE } from '../../../common/dto/pagination';
import { STORAGE_KINDS, StorageKind } from '../storage-kind';
import { wholeNumber } from '../../../common/dto/query-transforms';
import { StorageItemDto } from './storage-item.dto';

export class ListItemsQueryDto {
  @ApiPropertyOptional({ minimum: 1, default: 1 })
  @IsOptional()
  @Transform(wholeNumber)
  @IsInt()
  @Min(1)
  @Max(MAX_PAGE)
  page: number = 1;

  @ApiPropertyOptional({ minimum: 1, maximum: 100, default: 10 })
  @IsOptional()
  @Transform(wholeNumber)
  @IsInt()
  @Min(1)
  @Max(100)
  limit: number = 10;

  @ApiPropertyOptional({ enum: StorageKind })
  @IsOptional()
  @IsEnum(StorageKind, { message: `kind must be one of ${STORAGE_KINDS.join(', ')}` })
  kind?: StorageKind;
}

export class StorageItemPageDto {
  @ApiProperty({ type: [StorageItemDto], description: 'Newest first' }) items: StorageItemDto[];
  @ApiProperty({ description: 'Items matching the filter' }) total: number;
  @ApiProperty() page: number;
  @ApiProperty() limit: number;
  @ApiProperty() totalPages: number;
}
