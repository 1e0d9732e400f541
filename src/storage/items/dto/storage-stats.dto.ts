import { ApiProperty } from '@nestjs/swagger';
import { StorageKind } from '../storage-kind';

export class KindUsageDto {
  @ApiProperty({ enum: StorageKind }) kind: StorageKind;
  @ApiProperty({ description: 'Complete files of this kind' }) count: number;
  @ApiProperty({ description: 'Their bytes' }) size: number;
}

/** Allocation and use; only complete items count. */
export class StorageStatsDto {
  @ApiProperty({ description: "The organization's allocation in bytes" }) totalStorage: number;
  @ApiProperty({ description: 'Bytes of complete files' }) usedStorage: number;
  @ApiProperty({ description: 'max(0, usedStorage - totalStorage)' }) overageStorage: number;
  @ApiProperty({ type: [KindUsageDto], description: 'One entry per kind, all four always present' })
  breakdown: KindUsageDto[];
}
