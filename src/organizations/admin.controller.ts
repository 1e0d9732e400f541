import { Body, Controller, Delete, Get, HttpCode, HttpStatus, Patch, Post, Query } from '@nestjs/common';
import {
  ApiBadRequestResponse,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { AdminOnly } from '../auth/auth.decorators';
import { UuidParam } from '../common/decorators/uuid-param.decorator';
import { ApiJsonBody } from '../common/decorators/api-json-body.decorator';
import { ApiErrorDto } from '../common/dto/api-error.dto';
import { Permission } from '../auth/permission';
import {
  CreateApiKeyDto,
  CreatedApiKeyDto,
  CreatedOrganizationDto,
  CreateOrganizationDto,
  CreateSubscriptionDto,
  ListOrganizationsQueryDto,
  OrganizationDetailDto,
  OrganizationPageDto,
  OrganizationSettingsDto,
  SubscriptionDto,
  UpdateOrganizationDto,
} from './dto/organization.dto';
import {
  CREATED_API_KEY_EXAMPLE,
  CREATED_ORGANIZATION_EXAMPLE,
  ORGANIZATION_DETAIL_EXAMPLE,
  ORGANIZATION_PAGE_EXAMPLE,
  ORGANIZATION_SETTINGS_EXAMPLE,
  SUBSCRIPTION_EXAMPLE,
} from './dto/organization.examples';
import { OrganizationsService } from './organizations.service';

/** The admin API's prefix under base_url: authorised by ADMIN_TOKEN, never open to browsers. */
export const ADMIN_ROUTE = 'admin';

@ApiTags('admin')
@AdminOnly()
@Controller(`${ADMIN_ROUTE}/organizations`)
export class AdminController {
  constructor(private readonly organizations: OrganizationsService) {}

  @Post()
  @ApiOperation({
    summary: 'Create an organization',
    description:
      'The tenant that owns flags, files and API keys. It starts with the default storage allocation ' +
      '(STORAGE_DEFAULT_ALLOCATION, 1 GiB unless configured) and no subscription, so its flag allowance is the free level ' +
      '(FLAGS_ALLOWED_FREE, 5 unless configured; PATCH gives it one of its own). ' +
      'With `admin`, its first admin too, in the same transaction: a new user with that email, name and password, or the existing ' +
      'user with that email, given by `email` alone (they keep their password: one sent for them is refused with 400), who can sign ' +
      'in at once (POST /v1/auth/login). Next: issue it an API key, or sign in. ' +
      "CLI: `create-org --name <name> [--admin-email <email> [--admin-name <name>]]` (a new user's password in FLAGSTORE_PASSWORD).",
  })
  @ApiJsonBody(CreateOrganizationDto, {
    studio: { summary: 'A studio', value: { name: 'Acme Games' } },
    withAdmin: {
      summary: 'A studio and its first admin, a new user who signs in at once',
      value: { name: 'Acme Games', admin: { email: 'maya@acme.example', name: 'Maya Lin', password: 'correct horse battery staple' } },
    },
    withExistingAdmin: {
      summary: 'Another organization for an existing user, who keeps their password',
      value: { name: 'Acme Games (staging)', admin: { email: 'maya@acme.example' } },
    },
  })
  @ApiCreatedResponse({ type: CreatedOrganizationDto, example: CREATED_ORGANIZATION_EXAMPLE })
  @ApiBadRequestResponse({
    type: ApiErrorDto,
    description: 'A field is missing or invalid: admin.password sent for an existing user, or admin.name or admin.password missing for a new one',
  })
  createOrganization(@Body() dto: CreateOrganizationDto): Promise<CreatedOrganizationDto> {
    return this.organizations.createOrganization(dto);
  }

  @Get()
  @ApiOperation({
    summary: 'List organizations, newest first',
    description:
      'Pages of 1-100 organizations (20 by default). `search` keeps those whose name contains it, ignoring case; ' +
      '`%` and `_` match themselves. Read an organization by id for its keys and subscriptions. CLI: `list-orgs [--search] [--page] [--limit]`.',
  })
  @ApiOkResponse({ type: OrganizationPageDto, example: ORGANIZATION_PAGE_EXAMPLE })
  @ApiBadRequestResponse({ type: ApiErrorDto, description: 'Bad page, limit or search' })
  listOrganizations(@Query() query: ListOrganizationsQueryDto): Promise<OrganizationPageDto> {
    return this.organizations.listOrganizations(query);
  }

  @Get(':orgId')
  @ApiOperation({
    summary: 'Read an organization with its flag allowance, API keys and subscriptions',
    description:
      "`flagAllowance` is its own allowance (null: its level's), `flagQuota` the quota that applies now. Every key it was issued, oldest first, revoked ones included with `revokedAt`: id, name, permissions and dates, never the key or " +
      'its hash (the key is shown once, when issued). This is how to find the id of a key to revoke. Every subscription, cancelled ' +
      'ones included with `cancelledAt`. CLI: `show-org --org <orgId>`.',
  })
  @ApiOkResponse({ type: OrganizationDetailDto, example: ORGANIZATION_DETAIL_EXAMPLE })
  @ApiBadRequestResponse({ type: ApiErrorDto, description: 'orgId is not a valid UUID' })
  @ApiNotFoundResponse({ type: ApiErrorDto, description: 'No such organization' })
  getOrganization(@UuidParam('orgId') orgId: string): Promise<OrganizationDetailDto> {
    return this.organizations.getOrganization(orgId);
  }

  @Patch(':orgId')
  @ApiOperation({
    summary: "Change an organization's storage allocation or flag allowance",
    description:
      '`storageAllocation`: the bytes its files may use (GET /v1/storage reports use beyond it as overage; with ' +
      'STORAGE_ENFORCE_ALLOCATION=true uploads past it are refused); files already stored are kept. ' +
      "`flagAllowance`: the flags it may have, 1-10,000, whatever its subscriptions, or `null` to give it back its level's " +
      '(FLAGS_ALLOWED_FREE, or FLAGS_ALLOWED_SUBSCRIBED while it has an active subscription; 5 and 50 unless configured). ' +
      'A lower allowance locks the flags beyond it exactly as the end of a subscription does (the newest by creation time: they keep ' +
      'serving their values, only archiving and deleting them is allowed); a higher one unlocks them. It holds on every instance ' +
      "from the answer on; the answer's `flagQuota` is the quota that now applies. Send either field or both. " +
      'CLI: `set-allocation --org <orgId> --bytes <n>`, `set-allowance --org <orgId> --allowance <n|level>`.',
  })
  @ApiJsonBody(UpdateOrganizationDto, {
    tenGibibytes: { summary: '10 GiB of files', value: { storageAllocation: 10737418240 } },
    ownAllowance: { summary: 'An allowance of its own: 500 flags', value: { flagAllowance: 500 } },
    levelAllowance: { summary: "Back to its level's allowance (by subscription)", value: { flagAllowance: null } },
  })
  @ApiOkResponse({ type: OrganizationSettingsDto, example: ORGANIZATION_SETTINGS_EXAMPLE })
  @ApiBadRequestResponse({
    type: ApiErrorDto,
    description: 'orgId is not a valid UUID; storageAllocation or flagAllowance out of range or of the wrong type; neither sent',
  })
  @ApiNotFoundResponse({ type: ApiErrorDto, description: 'No such organization' })
  updateOrganization(@UuidParam('orgId') orgId: string, @Body() dto: UpdateOrganizationDto): Promise<OrganizationSettingsDto> {
    return this.organizations.updateOrganization(orgId, dto);
  }

  @Post(':orgId/api-keys')
  @ApiOperation({
    summary: 'Issue an API key; the key is in this response only',
    description:
      'The key (`fsk_` and 43 random characters) is returned once and stored only as a hash: keep it in a secret store. It works on ' +
      'every instance at once. Give each server only what it needs: a game server polling flags needs FLAGS_READ alone. ' +
      'CLI: `create-key --org <orgId> --name <name> --permissions FLAGS_READ,...`.',
  })
  @ApiJsonBody(CreateApiKeyDto, {
    gameServer: { summary: 'A game server: reads flags only', value: { name: 'game-server-eu', permissions: [Permission.FLAGS_READ] } },
    tooling: {
      summary: 'Internal tooling: manages flags and files',
      value: {
        name: 'liveops-console',
        permissions: [Permission.FLAGS_READ, Permission.FLAGS_WRITE, Permission.STORAGE_READ, Permission.STORAGE_WRITE],
      },
    },
  })
  @ApiCreatedResponse({ type: CreatedApiKeyDto, example: CREATED_API_KEY_EXAMPLE })
  @ApiNotFoundResponse({ type: ApiErrorDto, description: 'No such organization' })
  createApiKey(@UuidParam('orgId') orgId: string, @Body() dto: CreateApiKeyDto): Promise<CreatedApiKeyDto> {
    return this.organizations.createApiKey(orgId, dto);
  }

  @Delete(':orgId/api-keys/:keyId')
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiOperation({
    summary: 'Revoke an API key; it answers 401 from the next request on',
    description:
      'Refused from the next request on the instance that revoked it, and within a second on every other. A revoked key stays listed ' +
      '(with `revokedAt`) when the organization is read. Lost the key id? GET /v1/admin/organizations/{orgId} lists the keys by name. ' +
      'CLI: `revoke-key --org <orgId> --key <keyId>`.',
  })
  @ApiNoContentResponse({ description: 'Revoked' })
  @ApiNotFoundResponse({ type: ApiErrorDto, description: 'No such active key in this organization' })
  revokeApiKey(@UuidParam('orgId') orgId: string, @UuidParam('keyId') keyId: string): Promise<void> {
    return this.organizations.revokeApiKey(orgId, keyId);
  }

  @Post(':orgId/subscriptions')
  @ApiOperation({
    summary: 'Add an active subscription (raises the flag allowance to the subscribed level, 50 unless configured)',
    description:
      'An organization with at least one active subscription, of any plan, may have FLAGS_ALLOWED_SUBSCRIBED flags (50 unless ' +
      'configured) instead of FLAGS_ALLOWED_FREE (5), and flags that were locked beyond the allowance become editable again; an ' +
      'organization given an allowance of its own (PATCH flagAllowance) keeps that one. The plan is a label of your billing system. ' +
      'CLI: `subscribe --org <orgId> --plan <plan>`.',
  })
  @ApiJsonBody(CreateSubscriptionDto, { pro: { summary: 'A plan of your billing system', value: { plan: 'pro' } } })
  @ApiCreatedResponse({ type: SubscriptionDto, example: SUBSCRIPTION_EXAMPLE })
  @ApiNotFoundResponse({ type: ApiErrorDto, description: 'No such organization' })
  createSubscription(@UuidParam('orgId') orgId: string, @Body() dto: CreateSubscriptionDto): Promise<SubscriptionDto> {
    return this.organizations.createSubscription(orgId, dto);
  }

  @Delete(':orgId/subscriptions/:subscriptionId')
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiOperation({
    summary: 'Cancel a subscription',
    description:
      'When it was the last active one, the allowance falls back to the free level (FLAGS_ALLOWED_FREE, 5 unless configured; an ' +
      'allowance of its own stays): the flags beyond it (the newest) keep serving their values ' +
      'but are locked against edits until the organization subscribes again or removes flags. CLI: `unsubscribe --org <orgId> --subscription <id>`.',
  })
  @ApiNoContentResponse({ description: 'Cancelled' })
  @ApiNotFoundResponse({ type: ApiErrorDto, description: 'No such active subscription in this organization' })
  cancelSubscription(@UuidParam('orgId') orgId: string, @UuidParam('subscriptionId') subscriptionId: string): Promise<void> {
    return this.organizations.cancelSubscription(orgId, subscriptionId);
  }
}
