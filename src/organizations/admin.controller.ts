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
import { ApiErrorDto } from '../common/dto/api-error.dto';
import {
  CreateApiKeyDto,
  CreatedApiKeyDto,
  CreateOrganizationDto,
  CreateSubscriptionDto,
  ListOrganizationsQueryDto,
  OrganizationDetailDto,
  OrganizationDto,
  OrganizationPageDto,
  SubscriptionDto,
  UpdateOrganizationDto,
} from './dto/organization.dto';
import { OrganizationsService } from './organizations.service';

/** The admin API's prefix under base_url: authorised by ADMIN_TOKEN, never open to browsers. */
export const ADMIN_ROUTE = 'admin';

@ApiTags('admin')
@AdminOnly()
@Controller(`${ADMIN_ROUTE}/organizations`)
export class AdminController {
  constructor(private readonly organizations: OrganizationsService) {}

  @Post()
  @ApiOperation({ summary: 'Create an organization' })
  @ApiCreatedResponse({ type: OrganizationDto })
  createOrganization(@Body() dto: CreateOrganizationDto): Promise<OrganizationDto> {
    return this.organizations.createOrganization(dto);
  }

  @Get()
  @ApiOperation({ summary: 'List organizations, newest first' })
  @ApiOkResponse({ type: OrganizationPageDto })
  @ApiBadRequestResponse({ type: ApiErrorDto, description: 'Bad page, limit or search' })
  listOrganizations(@Query() query: ListOrganizationsQueryDto): Promise<OrganizationPageDto> {
    return this.organizations.listOrganizations(query);
  }

  @Get(':orgId')
  @ApiOperation({ summary: 'Read an organization with its API keys and subscriptions' })
  @ApiOkResponse({ type: OrganizationDetailDto })
  @ApiBadRequestResponse({ type: ApiErrorDto, description: 'orgId is not a valid UUID' })
  @ApiNotFoundResponse({ type: ApiErrorDto, description: 'No such organization' })
  getOrganization(@UuidParam('orgId') orgId: string): Promise<OrganizationDetailDto> {
    return this.organizations.getOrganization(orgId);
  }

  @Patch(':orgId')
  @ApiOperation({ summary: "Change an organization's storage allocation" })
  @ApiOkResponse({ type: OrganizationDto })
  @ApiNotFoundResponse({ type: ApiErrorDto, description: 'No such organization' })
  updateOrganization(@UuidParam('orgId') orgId: string, @Body() dto: UpdateOrganizationDto): Promise<OrganizationDto> {
    return this.organizations.updateOrganization(orgId, dto);
  }

  @Post(':orgId/api-keys')
  @ApiOperation({ summary: 'Issue an API key; the key is in this response only' })
  @ApiCreatedResponse({ type: CreatedApiKeyDto })
  @ApiNotFoundResponse({ type: ApiErrorDto, description: 'No such organization' })
  createApiKey(@UuidParam('orgId') orgId: string, @Body() dto: CreateApiKeyDto): Promise<CreatedApiKeyDto> {
    return this.organizations.createApiKey(orgId, dto);
  }

  @Delete(':orgId/api-keys/:keyId')
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiOperation({ summary: 'Revoke an API key; it answers 401 from the next request on' })
  @ApiNoContentResponse({ description: 'Revoked' })
  @ApiNotFoundResponse({ type: ApiErrorDto, description: 'No such active key in this organization' })
  revokeApiKey(@UuidParam('orgId') orgId: string, @UuidParam('keyId') keyId: string): Promise<void> {
    return this.organizations.revokeApiKey(orgId, keyId);
  }

  @Post(':orgId/subscriptions')
  @ApiOperation({ summary: 'Add an active subscription (raises the flag allowance to 50)' })
  @ApiCreatedResponse({ type: SubscriptionDto })
  @ApiNotFoundResponse({ type: ApiErrorDto, description: 'No such organization' })
  createSubscription(@UuidParam('orgId') orgId: string, @Body() dto: CreateSubscriptionDto): Promise<SubscriptionDto> {
    return this.organizations.createSubscription(orgId, dto);
  }

  @Delete(':orgId/subscriptions/:subscriptionId')
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiOperation({ summary: 'Cancel a subscription' })
  @ApiNoContentResponse({ description: 'Cancelled' })
  @ApiNotFoundResponse({ type: ApiErrorDto, description: 'No such active subscription in this organization' })
  cancelSubscription(@UuidParam('orgId') orgId: string, @UuidParam('subscriptionId') subscriptionId: string): Promise<void> {
    return this.organizations.cancelSubscription(orgId, subscriptionId);
  }
}
