import { ApiProperty } from '@nestjs/swagger';

export class FeatureFlagQuotaDto {
  @ApiProperty({
    description:
      "Flags allowed: 5 without a subscription, 50 with any active subscription (the deployment's levels when configured), " +
      'or the allowance the operator gave this organization',
    example: 5,
  })
  max: number;

  @ApiProperty({ description: 'Flags currently defined, archived ones included', example: 3 })
  used: number;

  @ApiProperty({ description: 'Whether the organization has any active subscription' })
  subscribed: boolean;

  @ApiProperty({ description: 'Flags beyond max; they keep serving but cannot be edited', example: 0 })
  locked: number;
}
