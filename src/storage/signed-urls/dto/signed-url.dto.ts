import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, MaxLength, Min, ValidateBy } from 'class-validator';
import { wholeNumber } from '../../../common/dto/query-transforms';
import { FILE_NAME_MAX_LENGTH, FILE_NAME_RULE, fileNameProblem } from '../../items/file-name';

export class SignedUrlQueryDto {
  @ApiPropertyOptional({ description: 'MIME type of the file (pre-allocated mode, with size)', example: 'image/png' })
  @IsOptional()
  @IsString()
  @MaxLength(255)
  contentType?: string;

  @ApiPropertyOptional({ description: 'Exact file size in bytes (pre-allocated mode, with contentType)', minimum: 0, example: 20480 })
  @IsOptional()
  @Transform(wholeNumber)
  @IsInt()
  @Min(0)
  @Max(Number.MAX_SAFE_INTEGER)
  size?: number;

  @ApiPropertyOptional({
    description:
      'JSON-encoded object of string, number or boolean values (pre-allocated mode): at most 10 keys; key names ' +
      'up to 128 alphanumerics, underscores, hyphens; strings up to 512 characters; 2 KB in total',
    example: '{"level":3}',
  })
  @IsOptional()
  @IsString()
  metadata?: string;

  @ApiPropertyOptional({
    minLength: 1,
    maxLength: FILE_NAME_MAX_LENGTH,
    description:
      `The file's name (pre-allocated mode): ${FILE_NAME_RULE}. Answered as fileName on the item and given by the CDN in ` +
      'Content-Disposition; kept apart from metadata. In the non-allocated mode the file part’s filename names the file.',
    example: 'level-3 banner.png',
  })
  @IsOptional()
  @IsString()
  @ValidateBy({
    name: 'isFileName',
    validator: {
      validate: (value: unknown) => typeof value !== 'string' || fileNameProblem(value) === null,
      defaultMessage: (args) => `fileName ${fileNameProblem(String(args?.value))}`,
    },
  })
  fileName?: string;
}

export class SignedUrlDto {
  @ApiProperty({
    format: 'uri',
    description:
      'Upload target on {upload_url}. Pre-allocated: PUT the raw bytes with the declared Content-Type. ' +
      'Non-allocated: POST multipart/form-data with field `file` and optional field `metadata` (JSON). No bearer header.',
  })
  url: string;

  @ApiProperty({ format: 'date-time', description: 'The URL works once, until this time (15 minutes)' })
  expiresAt: string;

  @ApiPropertyOptional({ format: 'uuid', description: 'Pre-allocated mode only: the id the file has after upload' })
  mediaId?: string;

  @ApiPropertyOptional({ format: 'uri', description: 'Pre-allocated mode only: {cdn_url}/c/<organizationId>/<mediaId>' })
  mediaUrl?: string;
}
