import { ApiProperty } from '@nestjs/swagger';
import { IsBoolean, IsInt, Max, Min } from 'class-validator';
import { pageFields, PageQueryDto, totalPages } from '../../common/dto/pagination';
import { ReviewHistoryRow, ReviewSetting } from '../review-settings.repository';

export const MAX_APPROVALS = 5;

export class ReviewSettingDto implements ReviewSetting {
  @ApiProperty({ description: 'Direct flag writes are refused (403 REVIEW_REQUIRED): changes go through change requests', example: true })
  @IsBoolean({ message: 'required must be true or false' })
  required: boolean;

  @ApiProperty({ minimum: 1, maximum: MAX_APPROVALS, description: 'Approvals a change request needs', example: 1 })
  @IsInt({ message: `approvals must be a whole number from 1 to ${MAX_APPROVALS}` })
  @Min(1, { message: `approvals must be a whole number from 1 to ${MAX_APPROVALS}` })
  @Max(MAX_APPROVALS, { message: `approvals must be a whole number from 1 to ${MAX_APPROVALS}` })
  approvals: number;

  @ApiProperty({ description: "Whether a request's author may approve it", example: false })
  @IsBoolean({ message: 'selfApproval must be true or false' })
  selfApproval: boolean;

  static from(setting: ReviewSetting): ReviewSettingDto {
    return { required: setting.required, approvals: setting.approvals, selfApproval: setting.selfApproval };
  }
}

export class ReviewHistoryUserDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ description: 'Their name now' }) name: string;
}

export class ReviewHistoryEntryDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ type: ReviewHistoryUserDto, nullable: true, description: 'The admin who changed it' }) user: ReviewHistoryUserDto | null;
  @ApiProperty({ format: 'date-time' }) at: string;
  @ApiProperty({ type: ReviewSettingDto }) before: ReviewSettingDto;
  @ApiProperty({ type: ReviewSettingDto }) after: ReviewSettingDto;

  static from(row: ReviewHistoryRow): ReviewHistoryEntryDto {
    return {
      id: row.id,
      user: row.userId === null ? null : { id: row.userId, name: row.userName ?? '' },
      at: row.createdAt.toISOString(),
      before: ReviewSettingDto.from(row.before),
      after: ReviewSettingDto.from(row.after),
    };
  }
}

export class ReviewHistoryPageDto {
  @ApiProperty({ type: [ReviewHistoryEntryDto], description: 'Newest first' }) results: ReviewHistoryEntryDto[];
  @ApiProperty(pageFields.total) total: number;
  @ApiProperty(pageFields.page) page: number;
  @ApiProperty(pageFields.totalPages) totalPages: number;

  static from(rows: ReviewHistoryRow[], total: number, query: PageQueryDto): ReviewHistoryPageDto {
    return { results: rows.map(ReviewHistoryEntryDto.from), total, page: query.page, totalPages: totalPages(total, query.limit) };
  }
}

export class ReviewHistoryQueryDto extends PageQueryDto {}
