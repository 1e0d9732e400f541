import type { ServerResponse } from 'node:http';
import { Controller, ForbiddenException, Get, Query, Req, Res } from '@nestjs/common';
import {
  ApiCookieAuth,
  ApiForbiddenResponse,
  ApiOkResponse,
  ApiOperation,
  ApiQuery,
  ApiTags,
  ApiTooManyRequestsResponse,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import type { Request } from 'express';
import { RETRY_AFTER, SESSION_SECURITY } from '../auth/auth.decorators';
import { AuthenticatedRequest } from '../auth/principal';
import { RequestAuthenticator } from '../auth/request-authenticator';
import { ApiErrorDto } from '../common/dto/api-error.dto';
import { Public } from '../http/access';
import { MAX_EVENT_STREAMS_PER_USER, OrganizationEvents } from './organization-events';

export const EVENTS_ROUTE = 'events';

@ApiTags('events')
@Controller(EVENTS_ROUTE)
export class EventsController {
  constructor(
    private readonly requests: RequestAuthenticator,
    private readonly events: OrganizationEvents,
  ) {}

  @Get()
  // Authenticated here: the session cookie with ?organizationId= (an EventSource sends no headers).
  @Public()
  @ApiCookieAuth(SESSION_SECURITY)
  @ApiOperation({
    summary: "The organization's event stream (server-sent events), for the console: sessions only",
    description:
      'Notifications of what changed, so that the console re-reads it through the API: `event: flags` with `data: {"flagIds": [...]}` ' +
      'after every committed flag change (any field; a deleted flag too), and `event: storage` with `data: {"ids": [...], "change": ' +
      '"uploaded" | "deleted" | "purged"}` after every completed upload, delete and purge, `event: review-setting` with `data: {"id": ' +
      '"<history entry>"}` after every change of the review setting, and `event: change-requests` with `data: {"ids": [...]}` after every ' +
      'change of a change request (opened, edited, reviewed, withdrawn, applied, failed), from every instance within a second. A comment ' +
      `every 15 s; the stream ends after 10 minutes, and when the session ends (logout, password change, idle or past its lifetime: an open stream is not a use of the session) or the person leaves the organization (the browser reconnects). ` +
      `At most ${MAX_EVENT_STREAMS_PER_USER} open streams per person on an instance. Any member may listen.`,
  })
  @ApiQuery({
    name: 'organizationId',
    required: true,
    description: "One of the signed-in user's organizations (as X-Organization-Id names it elsewhere)",
  })
  @ApiOkResponse({ description: 'The event stream', content: { 'text/event-stream': { schema: { type: 'string' } } } })
  @ApiUnauthorizedResponse({ type: ApiErrorDto, description: 'Not signed in, or the session has ended' })
  @ApiForbiddenResponse({
    type: ApiErrorDto,
    description: "An API key (the stream is for people), or no ?organizationId= of one of the user's organizations",
  })
  @ApiTooManyRequestsResponse({
    type: ApiErrorDto,
    headers: RETRY_AFTER,
    description: `TOO_MANY_STREAMS: ${MAX_EVENT_STREAMS_PER_USER} streams of this person already open here; RATE_LIMITED: too many failed authentications`,
  })
  async stream(
    @Req() request: Request,
    @Res() response: ServerResponse,
    // Read by RequestAuthenticator from the URL; declared so that the query's rule knows it.
    @Query('organizationId') _organizationId?: unknown,
  ): Promise<void> {
    const principal = await this.requests.principal(request, { stream: true });
    (request as AuthenticatedRequest).principal = principal; // for the request's log line
    if (principal.type !== 'session')
      throw new ForbiddenException('The event stream is for signed-in people; game servers use GET /v1/flags/config/stream');
    this.events.open(principal, response);
  }
}
