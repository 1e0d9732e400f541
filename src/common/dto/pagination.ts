import { ApiProperty, ApiPropertyOptions } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsInt, Max, Min } from 'class-validator';
import { wholeNumber } from './query-transforms';

/** Keeps the row offset, (page - 1) * limit, well inside PostgreSQL's bigint. */
export const MAX_PAGE = 1_000_000_000;

/** `page` and `limit` query parameters: 1-indexed pages of 1-100 items, 20 by default. */
export class PageQueryDto {
  @ApiProperty({ required: false, minimum: 1, maximum: MAX_PAGE, default: 1, description: '1-indexed page' })
  @Transform(wholeNumber)
  @IsInt()
  @Min(1)
  @Max(MAX_PAGE)
  page: number = 1;

  @ApiProperty({ required: false, minimum: 1, maximum: 100, default: 20, description: 'Page size' })
  @Transform(wholeNumber)
  @IsInt()
  @Min(1)
  @Max(100)
  limit: number = 20;
}

/** The rows a page covers. */
export function pageWindow(query: PageQueryDto): { offset: number; limit: number } {
  return { offset: (query.page - 1) * query.limit, limit: query.limit };
}

export function totalPages(total: number, limit: number): number {
  return Math.ceil(total / limit);
}

export const pageFields = {
  total: { description: 'Entries matching the filter', example: 1 } satisfies ApiPropertyOptions,
  page: { description: 'The page returned, 1-indexed', example: 1 } satisfies ApiPropertyOptions,
  totalPages: { description: 'Pages at this limit (0 when nothing matches)', example: 1 } satisfies ApiPropertyOptions,
};
