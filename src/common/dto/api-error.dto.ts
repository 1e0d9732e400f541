import { ApiProperty } from '@nestjs/swagger';

/** The body of every error outside the storage endpoints. */
export class ApiErrorDto {
  @ApiProperty({ example: 409 }) statusCode: number;
  @ApiProperty({ description: 'Machine-readable code', example: 'FLAG_KEY_TAKEN' }) error: string;
  @ApiProperty({ description: 'What went wrong, naming the field or rule', example: 'key must match ^[a-z0-9][a-z0-9_-]*$' })
  message: string;
}
