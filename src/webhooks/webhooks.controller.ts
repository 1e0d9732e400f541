import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Param, Patch, Post, Query } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiBadRequestResponse,
  ApiConflictResponse,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiParam,
  ApiTags,
} from '@nestjs/swagger';
import { CurrentPrincipal, MemberRoute } from '../auth/auth.decorators';
import { SessionPrincipal } from '../auth/principal';
import { ApiJsonBody } from '../common/decorators/api-json-body.decorator';
import { UuidParam } from '../common/decorators/uuid-param.decorator';
import { ApiErrorDto } from '../common/dto/api-error.dto';
import {
  CreatedWebhookEndpointDto,
  CreateWebhookDto,
  RotatedWebhookSecretDto,
  UpdateWebhookDto,
  WebhookDeliveryPageDto,
  WebhookDeliveryQueryDto,
  WebhookEndpointDto,
  WebhookEndpointListDto,
  WebhookEventQueuedDto,
} from './dto/webhook.dto';
import { MAX_WEBHOOK_ENDPOINTS, WebhooksService } from './webhooks.service';

const ADMINS = { forbidden: 'Not an admin of the organization, an API key, no X-Organization-Id of one of yours, or CSRF_TOKEN_INVALID' };
const NOT_FOUND = 'WEBHOOK_NOT_FOUND: no such endpoint in this organization';
const BAD_ID = 'webhookId is not a UUID';

const ENDPOINT_EXAMPLE: WebhookEndpointDto = {
  id: '6f1c2a9e-4b7d-4e21-9a3f-0c5d8e7b1a24',
  url: 'https://hooks.example.com/flagstore',
  description: 'Deploy bot',
  events: ['flag.changed', 'change-request.opened'],
  format: 'standard',
  flagKeys: null,
  enabled: true,
  disabledReason: null,
  disabledAt: null,
  previousSecretExpiresAt: null,
  lastDelivery: { status: 'succeeded', responseStatus: 200, at: '2026-12-03T09:00:01.000Z' },
  createdAt: '2026-12-01T10:00:00.000Z',
  updatedAt: '2026-12-01T10:00:00.000Z',
};
const SECRET_EXAMPLE = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwJ0dAbcdEfg4=';
const QUEUED_EXAMPLE: WebhookEventQueuedDto = { eventId: 'msg_2Xk9fQ0m1bV7yTq8LwZ3Ug' };
const DELIVERIES_EXAMPLE: WebhookDeliveryPageDto = {
  results: [
    {
      eventId: 'msg_2Xk9fQ0m1bV7yTq8LwZ3Ug',
      type: 'flag.changed',
      attempt: 2,
      status: 'succeeded',
      responseStatus: 200,
      durationMs: 84,
      responseExcerpt: 'ok',
      error: null,
      at: '2026-12-03T09:00:06.000Z',
    },
    {
      eventId: 'msg_2Xk9fQ0m1bV7yTq8LwZ3Ug',
      type: 'flag.changed',
      attempt: 1,
      status: 'failed',
      responseStatus: 503,
      durationMs: 31,
      responseExcerpt: 'Service Unavailable',
      error: null,
      at: '2026-12-03T09:00:01.000Z',
    },
  ],
  total: 2,
  page: 1,
  totalPages: 1,
};

const CREATE_EXAMPLE: CreateWebhookDto = {
  url: 'https://hooks.example.com/flagstore',
  events: ['flag.changed', 'change-request.opened'],
  format: 'standard',
  flagKeys: null,
  description: 'Deploy bot',
};

/**
 * An organization's webhook endpoints (decisions.md, "Webhooks (turn 5)"), for its admins with a session
 * (X-Organization-Id names the organization; changes carry X-CSRF-Token). API keys get 403: an endpoint's URL and
 * secret are the admins' to see.
 */
@ApiTags('webhooks')
@Controller('organization/webhooks')
export class WebhooksController {
  constructor(private readonly webhooks: WebhooksService) {}

  @Get()
  @MemberRoute('admin', ADMINS)
  @ApiOperation({ summary: "The organization's webhook endpoints (admins)", description: 'Never the signing secrets.' })
  @ApiOkResponse({ type: WebhookEndpointListDto, example: { results: [ENDPOINT_EXAMPLE] } })
  list(@CurrentPrincipal() principal: SessionPrincipal): Promise<WebhookEndpointListDto> {
    return this.webhooks.list(principal.organizationId);
  }

  @Post()
  @MemberRoute('admin', ADMINS)
  @ApiOperation({
    summary: 'Add a webhook endpoint (admins)',
    description:
      `At most ${MAX_WEBHOOK_ENDPOINTS} per organization. Each committed change the endpoint subscribes to is POSTed to it, in commit ` +
      'order, at least once: Standard Webhooks headers (`webhook-id`, `webhook-timestamp`, `webhook-signature: v1,<base64 HMAC-SHA256>`) ' +
      'signed with the secret answered here, once. Retried after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h and 10 h; a 410 or the last failure ' +
      'disables the endpoint.',
  })
  @ApiJsonBody(CreateWebhookDto, { standard: { summary: 'Signed JSON for a deploy bot', value: CREATE_EXAMPLE } })
  @ApiCreatedResponse({
    type: CreatedWebhookEndpointDto,
    description: 'The endpoint, with its secret this once',
    example: { ...ENDPOINT_EXAMPLE, lastDelivery: null, secret: SECRET_EXAMPLE },
  })
  @ApiBadRequestResponse({ type: ApiErrorDto, description: 'A malformed body, or a URL the safety rules refuse: the message names the field' })
  @ApiConflictResponse({ type: ApiErrorDto, description: `WEBHOOK_LIMIT: the organization has ${MAX_WEBHOOK_ENDPOINTS} endpoints already` })
  create(@CurrentPrincipal() principal: SessionPrincipal, @Body() dto: CreateWebhookDto): Promise<CreatedWebhookEndpointDto> {
    return this.webhooks.create(principal, dto);
  }

  @Get(':webhookId')
  @MemberRoute('admin', ADMINS)
  @ApiOperation({
    summary: 'One webhook endpoint (admins)',
    description: 'Whether it is enabled (and if not, why), its latest attempt, and until when a rotated secret still signs. Never the secret.',
  })
  @ApiOkResponse({ type: WebhookEndpointDto, example: ENDPOINT_EXAMPLE })
  @ApiBadRequestResponse({ type: ApiErrorDto, description: BAD_ID })
  @ApiNotFoundResponse({ type: ApiErrorDto, description: NOT_FOUND })
  get(@CurrentPrincipal() principal: SessionPrincipal, @UuidParam('webhookId') id: string): Promise<WebhookEndpointDto> {
    return this.webhooks.get(principal.organizationId, id);
  }

  @Patch(':webhookId')
  @MemberRoute('admin', ADMINS)
  @ApiOperation({
    summary: 'Change, disable or enable a webhook endpoint (admins)',
    description:
      'Any of url, events, format, flagKeys, description, enabled. Disabling records what waits for it, and every event until it is enabled ' +
      'again, as `skipped`; enabling starts from the next event (older ones can be redelivered).',
  })
  @ApiJsonBody(UpdateWebhookDto, { disable: { summary: 'Disable it', value: { enabled: false } } })
  @ApiOkResponse({
    type: WebhookEndpointDto,
    example: { ...ENDPOINT_EXAMPLE, enabled: false, disabledReason: 'Disabled by Maya', disabledAt: '2026-12-03T10:00:00.000Z' },
  })
  @ApiBadRequestResponse({ type: ApiErrorDto, description: 'A malformed body or id, or a URL the safety rules refuse' })
  @ApiNotFoundResponse({ type: ApiErrorDto, description: NOT_FOUND })
  update(
    @CurrentPrincipal() principal: SessionPrincipal,
    @UuidParam('webhookId') id: string,
    @Body() dto: UpdateWebhookDto,
  ): Promise<WebhookEndpointDto> {
    return this.webhooks.update(principal, id, dto);
  }

  @Delete(':webhookId')
  @HttpCode(HttpStatus.NO_CONTENT)
  @MemberRoute('admin', ADMINS)
  @ApiOperation({ summary: 'Delete a webhook endpoint (admins)', description: 'With its deliveries, waiting or not.' })
  @ApiNoContentResponse({ description: 'Deleted' })
  @ApiBadRequestResponse({ type: ApiErrorDto, description: BAD_ID })
  @ApiNotFoundResponse({ type: ApiErrorDto, description: NOT_FOUND })
  delete(@CurrentPrincipal() principal: SessionPrincipal, @UuidParam('webhookId') id: string): Promise<void> {
    return this.webhooks.delete(principal, id);
  }

  @Post(':webhookId/rotate-secret')
  @HttpCode(HttpStatus.OK)
  @MemberRoute('admin', ADMINS)
  @ApiOperation({
    summary: "Rotate an endpoint's signing secret (admins)",
    description: 'For 24 hours every delivery carries two signatures, by the new and the previous secret (space-separated), so receivers can switch.',
  })
  @ApiOkResponse({ type: RotatedWebhookSecretDto, example: { secret: SECRET_EXAMPLE, previousSecretExpiresAt: '2026-12-04T09:00:00.000Z' } })
  @ApiBadRequestResponse({ type: ApiErrorDto, description: BAD_ID })
  @ApiNotFoundResponse({ type: ApiErrorDto, description: NOT_FOUND })
  rotateSecret(@CurrentPrincipal() principal: SessionPrincipal, @UuidParam('webhookId') id: string): Promise<RotatedWebhookSecretDto> {
    return this.webhooks.rotateSecret(principal, id);
  }

  @Post(':webhookId/test')
  @HttpCode(HttpStatus.ACCEPTED)
  @MemberRoute('admin', ADMINS)
  @ApiOperation({
    summary: 'Send a test event (admins)',
    description: 'A `webhook.test` event for this endpoint alone, delivered like any other (signed, in order, retried); see its deliveries.',
  })
  @ApiAcceptedResponse({ type: WebhookEventQueuedDto, example: QUEUED_EXAMPLE })
  @ApiBadRequestResponse({ type: ApiErrorDto, description: BAD_ID })
  @ApiNotFoundResponse({ type: ApiErrorDto, description: NOT_FOUND })
  @ApiConflictResponse({ type: ApiErrorDto, description: 'WEBHOOK_DISABLED: enable the endpoint first' })
  test(@CurrentPrincipal() principal: SessionPrincipal, @UuidParam('webhookId') id: string): Promise<WebhookEventQueuedDto> {
    return this.webhooks.test(principal, id);
  }

  @Get(':webhookId/deliveries')
  @MemberRoute('admin', ADMINS)
  @ApiOperation({
    summary: "An endpoint's deliveries of the last 7 days (admins)",
    description:
      'Newest first: every attempt (status, response code, duration, the first 1 KB of the answer), each delivery waiting for its next ' +
      'attempt (`pending`) and each event that came while the endpoint was disabled (`skipped`).',
  })
  @ApiOkResponse({ type: WebhookDeliveryPageDto, example: DELIVERIES_EXAMPLE })
  @ApiBadRequestResponse({ type: ApiErrorDto, description: 'A bad id, page or limit' })
  @ApiNotFoundResponse({ type: ApiErrorDto, description: NOT_FOUND })
  deliveries(
    @CurrentPrincipal() principal: SessionPrincipal,
    @UuidParam('webhookId') id: string,
    @Query() query: WebhookDeliveryQueryDto,
  ): Promise<WebhookDeliveryPageDto> {
    return this.webhooks.deliveries(principal.organizationId, id, query);
  }

  @Post(':webhookId/deliveries/:eventId/redeliver')
  @HttpCode(HttpStatus.ACCEPTED)
  @MemberRoute('admin', ADMINS)
  @ApiOperation({
    summary: 'Send an event to the endpoint again (admins)',
    description:
      'Any event the endpoint had a delivery of in the last 7 days (sent, failed or skipped), with the same `webhook-id`, after what waits for it.',
  })
  @ApiParam({ name: 'eventId', description: 'The event (`webhook-id`)', example: 'msg_2Xk9fQ0m1bV7yTq8LwZ3Ug' })
  @ApiAcceptedResponse({ type: WebhookEventQueuedDto, example: QUEUED_EXAMPLE })
  @ApiBadRequestResponse({ type: ApiErrorDto, description: 'webhookId is not a UUID, or eventId is not an event id' })
  @ApiNotFoundResponse({ type: ApiErrorDto, description: `${NOT_FOUND}; WEBHOOK_DELIVERY_NOT_FOUND: no delivery of that event in 7 days` })
  @ApiConflictResponse({ type: ApiErrorDto, description: 'WEBHOOK_DISABLED: enable the endpoint first' })
  redeliver(
    @CurrentPrincipal() principal: SessionPrincipal,
    @UuidParam('webhookId') id: string,
    @Param('eventId') eventId: string,
  ): Promise<WebhookEventQueuedDto> {
    return this.webhooks.redeliver(principal, id, eventId);
  }
}
