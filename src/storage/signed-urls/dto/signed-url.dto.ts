import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Transform } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, MaxLength, Min } from 'class-validator';
import { wholeNumber } from '../../../common/dto/query-transforms';

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
