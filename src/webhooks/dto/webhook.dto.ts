import { applyDecorators } from '@nestjs/common';
import { ApiExtraModels, ApiProperty, getSchemaPath } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayMinSize,
  ArrayUnique,
  IsArray,
  IsBoolean,
  IsIn,
  IsString,
  Matches,
  MaxLength,
  MinLength,
  ValidateIf,
} from 'class-validator';
import { pageFields, PageQueryDto } from '../../common/dto/pagination';
import { FLAG_KEY_PATTERN } from '../../flags/flag.model';
import { MAX_WEBHOOK_URL_LENGTH } from '../delivery/webhook-url';
import { WEBHOOK_EVENT_TYPES, WEBHOOK_FORMATS, WebhookEventType, WebhookFormat } from '../webhook-event';

export const MAX_WEBHOOK_FLAG_KEYS = 100;
export const MAX_WEBHOOK_DESCRIPTION_LENGTH = 500;

const EVENTS_MESSAGE = `events must be a non-empty list of distinct event types from: ${WEBHOOK_EVENT_TYPES.join(', ')}`;
const FORMAT_MESSAGE = `format must be one of: ${WEBHOOK_FORMATS.join(', ')}`;
const FLAG_KEYS_MESSAGE = `flagKeys must be null or a list of 1-${MAX_WEBHOOK_FLAG_KEYS} distinct flag keys`;

/** The rules of each field, the same in POST (required) and PATCH (optional; `null` only where it means something). */
const urlRules = () =>
  applyDecorators(
    IsString({ message: 'url must be a string' }),
    MinLength(1, { message: 'url must not be empty' }),
    MaxLength(MAX_WEBHOOK_URL_LENGTH, { message: `url must be at most ${MAX_WEBHOOK_URL_LENGTH} characters` }),
  );
const eventsRules = () =>
  applyDecorators(
    IsArray({ message: EVENTS_MESSAGE }),
    ArrayMinSize(1, { message: EVENTS_MESSAGE }),
    ArrayMaxSize(WEBHOOK_EVENT_TYPES.length, { message: EVENTS_MESSAGE }),
    ArrayUnique({ message: EVENTS_MESSAGE }),
    IsIn(WEBHOOK_EVENT_TYPES, { each: true, message: EVENTS_MESSAGE }),
  );
const formatRules = () => IsIn(WEBHOOK_FORMATS, { message: FORMAT_MESSAGE });
/** null (every flag) or the keys; absent is null on POST and unchanged on PATCH. */
const flagKeysRules = () =>
  applyDecorators(
    ValidateIf((_, value) => value !== undefined && value !== null),
    IsArray({ message: FLAG_KEYS_MESSAGE }),
    ArrayMinSize(1, { message: FLAG_KEYS_MESSAGE }),
    ArrayMaxSize(MAX_WEBHOOK_FLAG_KEYS, { message: FLAG_KEYS_MESSAGE }),
    ArrayUnique({ message: FLAG_KEYS_MESSAGE }),
    Matches(FLAG_KEY_PATTERN, { each: true, message: `flagKeys must hold flag keys (${FLAG_KEY_PATTERN.source})` }),
    MaxLength(64, { each: true, message: 'flagKeys must hold flag keys of at most 64 characters' }),
  );
const descriptionRules = () =>
  applyDecorators(
    ValidateIf((_, value) => value !== undefined && value !== null),
    IsString({ message: 'description must be a string' }),
    MaxLength(MAX_WEBHOOK_DESCRIPTION_LENGTH, { message: `description must be at most ${MAX_WEBHOOK_DESCRIPTION_LENGTH} characters` }),
  );
/** PATCH: a field left out is unchanged; sent, it is held to the rules (null refused where it means nothing). */
const ifSent = () => ValidateIf((_, value) => value !== undefined);

const URL_DESCRIPTION =
  'Where deliveries are POSTed: https (http only when the operator sets WEBHOOK_ALLOW_HTTP), never resolving to a loopback, private, ' +
  'link-local, unique-local or metadata address (unless WEBHOOK_ALLOW_PRIVATE). Checked again on the address each delivery connects to.';
const FORMAT_DESCRIPTION =
  '`standard`: Standard Webhooks JSON `{type, timestamp, data}`, signed; `slack`: `{text, blocks}`; `discord`: `{content, embeds}`';
const FLAG_KEYS_DESCRIPTION =
  'Only events about these flags (flag changes and change requests touching any of them); null or absent: every flag. ' +
  'Review-setting and storage events are not about flags and always go.';

export class CreateWebhookDto {
  @ApiProperty({ maxLength: MAX_WEBHOOK_URL_LENGTH, description: URL_DESCRIPTION, example: 'https://hooks.example.com/flagstore' })
  @urlRules()
  url: string;

  @ApiProperty({
    enum: WEBHOOK_EVENT_TYPES,
    isArray: true,
    minItems: 1,
    maxItems: WEBHOOK_EVENT_TYPES.length,
    description: 'The events it receives',
    example: ['flag.changed'],
  })
  @eventsRules()
  events: WebhookEventType[];

  @ApiProperty({ enum: WEBHOOK_FORMATS, description: FORMAT_DESCRIPTION, example: 'standard' })
  @formatRules()
  format: WebhookFormat;

  @ApiProperty({
    required: false,
    nullable: true,
    type: [String],
    maxItems: MAX_WEBHOOK_FLAG_KEYS,
    description: FLAG_KEYS_DESCRIPTION,
    example: ['xp-multiplier'],
  })
  @flagKeysRules()
  flagKeys?: string[] | null;

  @ApiProperty({ required: false, type: String, nullable: true, maxLength: MAX_WEBHOOK_DESCRIPTION_LENGTH, example: 'Live-ops channel' })
  @descriptionRules()
  description?: string | null;
}

export class UpdateWebhookDto {
  @ApiProperty({ required: false, maxLength: MAX_WEBHOOK_URL_LENGTH, description: 'As at creation, checked again' })
  @ifSent()
  @urlRules()
  url?: string;

  @ApiProperty({ required: false, enum: WEBHOOK_EVENT_TYPES, isArray: true, minItems: 1, maxItems: WEBHOOK_EVENT_TYPES.length })
  @ifSent()
  @eventsRules()
  events?: WebhookEventType[];

  @ApiProperty({ required: false, enum: WEBHOOK_FORMATS, description: FORMAT_DESCRIPTION })
  @ifSent()
  @formatRules()
  format?: WebhookFormat;

  @ApiProperty({ required: false, nullable: true, type: [String], maxItems: MAX_WEBHOOK_FLAG_KEYS, description: FLAG_KEYS_DESCRIPTION })
  @flagKeysRules()
  flagKeys?: string[] | null;

  @ApiProperty({ required: false, type: String, nullable: true, maxLength: MAX_WEBHOOK_DESCRIPTION_LENGTH })
  @descriptionRules()
  description?: string | null;

  @ApiProperty({
    required: false,
    description:
      'false: disabled, its waiting deliveries and every new event recorded as `skipped`; true: enabled again, from the next event on ' +
      '(older ones can be redelivered)',
  })
  @ifSent()
  @IsBoolean({ message: 'enabled must be true or false' })
  enabled?: boolean;
}

export class WebhookLastDeliveryDto {
  @ApiProperty({ enum: ['succeeded', 'failed'] }) status: 'succeeded' | 'failed';
  @ApiProperty({ type: Number, nullable: true, description: 'The HTTP status answered; null when there was no answer' }) responseStatus:
    number | null;
  @ApiProperty({ format: 'date-time' }) at: string;
}

@ApiExtraModels(WebhookLastDeliveryDto)
export class WebhookEndpointDto {
  @ApiProperty({ format: 'uuid' }) id: string;
  @ApiProperty({ example: 'https://hooks.example.com/flagstore' }) url: string;
  @ApiProperty({ type: String, nullable: true }) description: string | null;
  @ApiProperty({ enum: WEBHOOK_EVENT_TYPES, isArray: true }) events: WebhookEventType[];
  @ApiProperty({ enum: WEBHOOK_FORMATS }) format: WebhookFormat;
  @ApiProperty({ type: [String], nullable: true, description: 'null: every flag' }) flagKeys: string[] | null;
  @ApiProperty() enabled: boolean;
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'Why it is disabled: by whom, or after a 410 Gone or the last failed retry',
    example: null,
  })
  disabledReason: string | null;
  @ApiProperty({ type: String, format: 'date-time', nullable: true }) disabledAt: string | null;
  @ApiProperty({
    type: String,
    format: 'date-time',
    nullable: true,
    description: 'Until when deliveries are also signed with the previous secret (24 h after a rotation); null: only the current one',
  })
  previousSecretExpiresAt: string | null;
  @ApiProperty({
    description: 'The latest attempt, if any',
    oneOf: [{ $ref: getSchemaPath(WebhookLastDeliveryDto) }, { type: 'object', nullable: true, enum: [null] }],
  })
  lastDelivery: WebhookLastDeliveryDto | null;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
}

export class CreatedWebhookEndpointDto extends WebhookEndpointDto {
  @ApiProperty({
    description: 'The signing secret, `whsec_` and base64 of 32 random bytes: shown this once (rotate it to get a new one)',
    example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  })
  secret: string;
}

export class WebhookEndpointListDto {
  @ApiProperty({ type: [WebhookEndpointDto], description: 'Oldest first; never the secrets' }) results: WebhookEndpointDto[];
}

export class RotatedWebhookSecretDto {
  @ApiProperty({ description: 'The new signing secret, shown this once' }) secret: string;
  @ApiProperty({ format: 'date-time', description: 'Until when the previous secret also signs' }) previousSecretExpiresAt: string;
}

export class WebhookEventQueuedDto {
  @ApiProperty({ description: 'The event, as its deliveries carry it in `webhook-id`', example: 'msg_2Xk9fQ0m1bV7yTq8LwZ3Ug' }) eventId: string;
}

export class WebhookDeliveryDto {
  @ApiProperty({ example: 'msg_2Xk9fQ0m1bV7yTq8LwZ3Ug' }) eventId: string;
  @ApiProperty({ example: 'flag.changed' }) type: string;
  @ApiProperty({ description: 'The attempt, from 1; for a pending delivery the next one; 0 for a skipped one' }) attempt: number;
  @ApiProperty({ enum: ['pending', 'succeeded', 'failed', 'skipped'] }) status: 'pending' | 'succeeded' | 'failed' | 'skipped';
  @ApiProperty({ type: Number, nullable: true }) responseStatus: number | null;
  @ApiProperty({ type: Number, nullable: true }) durationMs: number | null;
  @ApiProperty({ type: String, nullable: true, description: 'The first 1 KB of the answer' }) responseExcerpt: string | null;
  @ApiProperty({
    type: String,
    nullable: true,
    description: 'Why an attempt got no answer (a timeout, a refused address), or the last failure of a pending one',
  })
  error: string | null;
  @ApiProperty({
    format: 'date-time',
    description: 'When the attempt ended; for a pending one when it is due; for a skipped one when the event came',
  })
  at: string;
}

export class WebhookDeliveryPageDto {
  @ApiProperty({ type: [WebhookDeliveryDto], description: 'The last 7 days, newest first' }) results: WebhookDeliveryDto[];
  @ApiProperty(pageFields.total) total: number;
  @ApiProperty(pageFields.page) page: number;
  @ApiProperty(pageFields.totalPages) totalPages: number;
}

export class WebhookDeliveryQueryDto extends PageQueryDto {}
