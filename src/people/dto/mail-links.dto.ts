import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsString, MaxLength } from 'class-validator';
import { CharLength } from '../../common/validation';
import { EMAIL_SPELLING, NormalEmail } from '../email-address';

/** Where the mail that carried an invitation's link stands (the outbox row's state). */
export class InvitationDeliveryDto {
  @ApiProperty({
    enum: ['pending', 'sent', 'failed'],
    description: 'pending: not delivered yet (tried again for 24 h); sent: the SMTP server took it; failed: given up (see lastError)',
  })
  state: 'pending' | 'sent' | 'failed';

  @ApiProperty({ minimum: 0, description: 'Attempts to hand it to the SMTP server so far' }) attempts: number;

  @ApiPropertyOptional({ description: 'Why the last attempt failed, when it did' }) lastError?: string;
}

export class PasswordResetRequestDto {
  @ApiProperty({ format: 'idn-email', maxLength: 254, example: 'maya@acme.example', description: EMAIL_SPELLING })
  @NormalEmail('email')
  @MaxLength(254)
  email: string;
}

export class PasswordResetDto {
  @ApiProperty({ minLength: 12, maxLength: 256, format: 'password' })
  @IsString()
  @CharLength(12, 256)
  newPassword: string;
}
