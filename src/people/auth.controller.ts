import { Body, Controller, Get, HttpCode, HttpStatus, Inject, Param, Patch, Post, Req, Res } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiBadRequestResponse,
  ApiConflictResponse,
  ApiForbiddenResponse,
  ApiGoneResponse,
  ApiNoContentResponse,
  ApiNotFoundResponse,
  ApiOkResponse,
  ApiOperation,
  ApiServiceUnavailableResponse,
  ApiTags,
  ApiTooManyRequestsResponse,
  ApiUnauthorizedResponse,
} from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { CurrentUser, RETRY_AFTER, SignedIn } from '../auth/auth.decorators';
import { SignedInUser } from '../auth/principal';
import { IssuedSession } from '../auth/sessions/session-authenticator';
import { sessionCookieHeader } from '../auth/sessions/session-token';
import { ApiJsonBody } from '../common/decorators/api-json-body.decorator';
import { ApiErrorDto } from '../common/dto/api-error.dto';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { Public } from '../http/access';
import { AcceptInvitationDto, ChangePasswordDto, InvitationPreviewDto, LoginDto, SessionDto, SessionUserDto, UpdateMeDto } from './dto/people.dto';
import { INVITATION_PREVIEW_EXAMPLE, SESSION_EXAMPLE } from './dto/people.examples';
import { NO_STORE_HEADER } from './no-store';
import { SignInService } from './sign-in.service';
import { PasswordResetDto, PasswordResetRequestDto } from './dto/mail-links.dto';
import { EmailVerificationService } from './email-verification.service';
import { PasswordResetService } from './password-reset.service';

const SET_COOKIE = {
  ...NO_STORE_HEADER,
  'Set-Cookie': {
    description:
      'flagstore_session=<token>; Path=/; Max-Age=<SESSION_MAX_HOURS in seconds>; HttpOnly; SameSite=Lax (and Secure when PUBLIC_URL is https)',
    schema: { type: 'string' },
  },
};
const NO_STORE = { 'Cache-Control': { description: 'no-store', schema: { type: 'string' } } };
const SIGN_IN_BUDGET = {
  type: ApiErrorDto,
  headers: RETRY_AFTER,
  description: 'RATE_LIMITED: too many failed sign-ins or invitation links from this address (SIGN_IN_FAILURES_PER_MINUTE)',
};

/**
 * Signing in and out with a password, the current session, a password change, and joining through an invitation.
 * The session cookie these set is what the console (and curl with a cookie jar) sends on every other route, with
 * X-Organization-Id naming the organization and X-CSRF-Token on changes.
 */
@ApiTags('auth')
@Controller('auth')
export class AuthController {
  constructor(
    private readonly signIns: SignInService,
    private readonly passwordReset: PasswordResetService,
    private readonly emailVerification: EmailVerificationService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Post('login')
  @Public()
  @HttpCode(HttpStatus.OK)
  @ApiOperation({
    summary: 'Sign in with email and password; sets the session cookie',
    description:
      'Answers who signed in, their organizations and the CSRF token, and sets the `flagstore_session` cookie (HttpOnly). With the cookie, ' +
      'every route under /v1 that takes an API key takes the session too: send `X-Organization-Id: <one of your organizations>`, and ' +
      '`X-CSRF-Token: <csrfToken>` on POST, PUT, PATCH and DELETE. An unknown email and a wrong password get the same 401 in the same time. ' +
      'Sign-in attempts are counted per email (10 per 15 minutes) and per address (SIGN_IN_FAILURES_PER_MINUTE) before the password is ' +
      'checked; a successful sign-in does not count. The email is read in its one spelling (trimmed, NFC, the domain in ASCII and ' +
      'lowercase, before the @ only A-Z lowercased): `alİce@a.example` is another email than `alice@a.example`. Answers carry `Cache-Control: no-store`.',
  })
  @ApiJsonBody(LoginDto, {
    password: { summary: 'Email and password', value: { email: 'maya@acme.example', password: 'correct horse battery staple' } },
  })
  @ApiOkResponse({ type: SessionDto, example: SESSION_EXAMPLE, headers: SET_COOKIE })
  @ApiBadRequestResponse({ type: ApiErrorDto, description: 'A field is missing or not a string; the message names it' })
  @ApiUnauthorizedResponse({ type: ApiErrorDto, description: 'WRONG_CREDENTIALS: unknown email or wrong password (one answer for both)' })
  @ApiTooManyRequestsResponse({
    type: ApiErrorDto,
    headers: RETRY_AFTER,
    description: 'RATE_LIMITED: too many failed sign-ins for this email or from this address',
  })
  @ApiServiceUnavailableResponse({ type: ApiErrorDto, description: 'Too many sign-ins are being checked at once; retry in a second' })
  async login(@Req() request: Request, @Body() dto: LoginDto, @Res({ passthrough: true }) response: Response): Promise<SessionDto> {
    const { body, session } = await this.signIns.login(request, dto);
    this.setCookie(response, session);
    return body;
  }

  @Get('session')
  @SignedIn()
  @ApiOperation({
    summary: 'The signed-in user, their organizations and the CSRF token',
    description: 'The sign-in body again, for a live session (the console asks on load). 401 once the session has ended.',
  })
  @ApiOkResponse({ type: SessionDto, example: SESSION_EXAMPLE, headers: NO_STORE_HEADER })
  session(@CurrentUser() user: SignedInUser): Promise<SessionDto> {
    return this.signIns.body(user.userId, user.csrfToken);
  }

  @Patch('me')
  @SignedIn()
  @ApiOperation({
    summary: "Change one's own settings: whether one is mailed about change requests",
    description:
      'Needs X-CSRF-Token. `reviewMail: false` stops the mails about change requests (opened for you to review; yours decided, applied ' +
      'or failed); `true` starts them again. Answers the user as `GET /auth/session` shows them.',
  })
  @ApiJsonBody(UpdateMeDto, { off: { summary: 'No more change request mail', value: { reviewMail: false } } })
  @ApiOkResponse({ type: SessionUserDto, example: { ...SESSION_EXAMPLE.user, reviewMail: false }, headers: NO_STORE_HEADER })
  @ApiBadRequestResponse({ type: ApiErrorDto, description: 'reviewMail missing or not a boolean' })
  @ApiForbiddenResponse({ type: ApiErrorDto, description: 'CSRF_TOKEN_INVALID: no X-CSRF-Token, or not the session’s' })
  updateMe(@CurrentUser() user: SignedInUser, @Body() dto: UpdateMeDto, @Res({ passthrough: true }) response: Response): Promise<SessionUserDto> {
    response.setHeader('Cache-Control', 'no-store');
    return this.signIns.updateMe(user, dto);
  }

  @Post('logout')
  @SignedIn()
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiOperation({
    summary: 'Sign out: the session ends on every instance',
    description:
      'Needs X-CSRF-Token. The session answers 401 from the next request on this instance, and within a second on every other; the cookie is cleared.',
  })
  @ApiNoContentResponse({ description: 'Signed out', headers: SET_COOKIE })
  @ApiForbiddenResponse({ type: ApiErrorDto, description: 'CSRF_TOKEN_INVALID: no X-CSRF-Token, or not the session’s' })
  async logout(@CurrentUser() user: SignedInUser, @Res({ passthrough: true }) response: Response): Promise<void> {
    await this.signIns.logout(user);
    response.setHeader('Set-Cookie', sessionCookieHeader('', 0, this.config.sessions.secureCookie));
  }

  @Post('password')
  @SignedIn()
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiOperation({
    summary: "Change one's password; every other session of the user ends",
    description:
      'Needs X-CSRF-Token, and currentPassword when the user has a password (a user of single sign-on only may set one). This session goes on; ' +
      'the others answer 401 from their next request. Wrong current passwords count as failed sign-ins.',
  })
  @ApiJsonBody(ChangePasswordDto, {
    change: { summary: 'A new password', value: { currentPassword: 'correct horse battery staple', newPassword: 'a longer passphrase of mine' } },
  })
  @ApiNoContentResponse({ description: 'Changed' })
  @ApiBadRequestResponse({ type: ApiErrorDto, description: 'newPassword outside 12-256 characters, or currentPassword wrong or missing' })
  @ApiForbiddenResponse({ type: ApiErrorDto, description: 'CSRF_TOKEN_INVALID: no X-CSRF-Token, or not the session’s' })
  changePassword(@Req() request: Request, @CurrentUser() user: SignedInUser, @Body() dto: ChangePasswordDto): Promise<void> {
    return this.signIns.changePassword(request, user, dto);
  }

  @Get('invitations/:token')
  @Public()
  @ApiOperation({
    summary: 'What an invitation link is for, before accepting it',
    description:
      'For a pending invitation: the organization, the role, who invited, the invited email and when the link expires. 404 for any ' +
      'other link (unknown, accepted, withdrawn, expired). It never says whether the email has an account: the console offers both ' +
      '“sign in as that person” and “create the account”. Counts against the address’s sign-in budget (SIGN_IN_FAILURES_PER_MINUTE) ' +
      'unless the invitation is found.',
  })
  @ApiOkResponse({ type: InvitationPreviewDto, example: INVITATION_PREVIEW_EXAMPLE, headers: NO_STORE_HEADER })
  @ApiNotFoundResponse({ type: ApiErrorDto, description: 'INVITATION_NOT_FOUND: no pending invitation has this token' })
  @ApiTooManyRequestsResponse(SIGN_IN_BUDGET)
  describeInvitation(@Req() request: Request, @Param('token') token: string): Promise<InvitationPreviewDto> {
    return this.signIns.describeInvitation(request, token);
  }

  @Post('invitations/:token/accept')
  @Public()
  @ApiOperation({
    summary: "Join an organization through an invitation's link",
    description:
      'The token is the last part of the invitation url. `{name, password}` creates the account of the invited email and signs it in ' +
      '(200, the sign-in body and cookie) when the email has no account. When it has one: send an empty body with that account’s ' +
      'session (cookie and X-CSRF-Token): 204, they are now a member. Anything else (no session, someone else’s, or a name and password ' +
      'for an email that has an account) is 401 SIGN_IN_REQUIRED, whichever the case: an inviter cannot learn whether an email has an ' +
      'account. A link works once, for 7 days. Counts against the address’s sign-in budget (SIGN_IN_FAILURES_PER_MINUTE) unless it ' +
      'succeeds; an unknown or used link costs no password hashing. Answers carry `Cache-Control: no-store`.',
  })
  @ApiJsonBody(
    AcceptInvitationDto,
    {
      newUser: { summary: 'A new account', value: { name: 'Sam Ortiz', password: 'a passphrase of my own' } },
      existingUser: { summary: 'A signed-in account (with the session cookie)', value: {} },
    },
    { required: false },
  )
  @ApiOkResponse({ type: SessionDto, example: SESSION_EXAMPLE, headers: SET_COOKIE, description: 'A new user, signed in' })
  @ApiNoContentResponse({ description: 'The signed-in user joined', headers: NO_STORE_HEADER })
  @ApiBadRequestResponse({ type: ApiErrorDto, description: 'name without password or the reverse, or outside their lengths' })
  @ApiUnauthorizedResponse({
    type: ApiErrorDto,
    description: 'SIGN_IN_REQUIRED: sign in as the invited person (then send an empty body with the session), or create the account',
  })
  @ApiForbiddenResponse({ type: ApiErrorDto, description: 'CSRF_TOKEN_INVALID: a live session without its X-CSRF-Token' })
  @ApiNotFoundResponse({ type: ApiErrorDto, description: 'INVITATION_NOT_FOUND: no invitation has this token' })
  @ApiGoneResponse({ type: ApiErrorDto, description: 'INVITATION_USED: accepted or withdrawn already, or expired' })
  @ApiConflictResponse({ type: ApiErrorDto, description: 'Already a member of the organization' })
  @ApiTooManyRequestsResponse(SIGN_IN_BUDGET)
  async acceptInvitation(
    @Req() request: Request,
    @Param('token') token: string,
    @Body() dto: AcceptInvitationDto,
    @Res({ passthrough: true }) response: Response,
  ): Promise<SessionDto | undefined> {
    const { body, session } = await this.signIns.acceptInvitation(request, token, dto ?? {});
    if (body === null || session === null) {
      response.status(HttpStatus.NO_CONTENT);
      return undefined;
    }
    response.status(HttpStatus.OK);
    this.setCookie(response, session);
    return body;
  }

  @Post('password-reset')
  @Public()
  @HttpCode(HttpStatus.ACCEPTED)
  @ApiOperation({
    summary: 'Ask for a password reset link by mail (mail on)',
    description:
      'Always 202, whether or not the email has an account (the answer never tells): an account with that email (in its one spelling) ' +
      'gets a mail with a link to the console’s page `/console/password-reset/<token>`, single use, valid 1 hour. Every request counts ' +
      'against the sign-in failure budgets of the address (SIGN_IN_FAILURES_PER_MINUTE) and of the email (10 per 15 minutes). ' +
      'With mail off (no SMTP_URL): 404 MAIL_OFF (an admin sets a new password instead).',
  })
  @ApiJsonBody(PasswordResetRequestDto, { reset: { summary: 'An email', value: { email: 'maya@acme.example' } } })
  @ApiAcceptedResponse({ description: 'Taken: a mail goes out if the email has an account', headers: NO_STORE })
  @ApiBadRequestResponse({ type: ApiErrorDto, description: 'email missing or not an email address' })
  @ApiNotFoundResponse({ type: ApiErrorDto, description: 'MAIL_OFF: SMTP_URL is not set' })
  @ApiTooManyRequestsResponse({
    type: ApiErrorDto,
    headers: RETRY_AFTER,
    description: 'RATE_LIMITED: too many requests from this address or for this email',
  })
  async requestPasswordReset(
    @Req() request: Request,
    @Body() dto: PasswordResetRequestDto,
    @Res({ passthrough: true }) response: Response,
  ): Promise<void> {
    response.setHeader('Cache-Control', 'no-store');
    await this.passwordReset.request(request, dto.email);
  }

  @Post('password-reset/:token')
  @Public()
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiOperation({
    summary: 'Set a new password through a mailed reset link (mail on)',
    description:
      'The token is the last part of the mailed link. Sets the password, ends every session of the user (on every instance within a ' +
      'second), and verifies the email (the link was read there). The link then stops working; of two uses at once, one wins. ' +
      'Each use takes an attempt from the address’s sign-in budget (a link that works gives it back); a bad link is refused before the password is hashed.',
  })
  @ApiJsonBody(PasswordResetDto, { reset: { summary: 'A new password', value: { newPassword: 'a longer passphrase of mine' } } })
  @ApiNoContentResponse({ description: 'The password is set; sign in with it', headers: NO_STORE })
  @ApiBadRequestResponse({ type: ApiErrorDto, description: 'newPassword missing or outside 12-256 characters' })
  @ApiNotFoundResponse({ type: ApiErrorDto, description: 'LINK_NOT_FOUND: no reset link has this token; MAIL_OFF: SMTP_URL is not set' })
  @ApiGoneResponse({ type: ApiErrorDto, description: 'LINK_USED: the link was used already, or its hour is over' })
  @ApiTooManyRequestsResponse({
    type: ApiErrorDto,
    headers: RETRY_AFTER,
    description: 'RATE_LIMITED: too many bad links or sign-ins from this address',
  })
  async resetPassword(
    @Req() request: Request,
    @Param('token') token: string,
    @Body() dto: PasswordResetDto,
    @Res({ passthrough: true }) response: Response,
  ): Promise<void> {
    response.setHeader('Cache-Control', 'no-store');
    await this.passwordReset.reset(request, token, dto.newPassword);
  }

  @Post('verify-email')
  @SignedIn()
  @HttpCode(HttpStatus.ACCEPTED)
  @ApiOperation({
    summary: 'Mail a link that verifies your email (signed in; mail on)',
    description:
      'Needs X-CSRF-Token. Mails a link to the console’s page `/console/verify-email/<token>` to the signed-in user’s own email, single use, ' +
      'valid 24 hours. Counts against the sign-in failure budgets of the address and the email. With mail off: 404 MAIL_OFF.',
  })
  @ApiAcceptedResponse({ description: 'The mail is on its way' })
  @ApiForbiddenResponse({ type: ApiErrorDto, description: 'CSRF_TOKEN_INVALID: no X-CSRF-Token, or not the session’s' })
  @ApiNotFoundResponse({ type: ApiErrorDto, description: 'MAIL_OFF: SMTP_URL is not set' })
  @ApiConflictResponse({ type: ApiErrorDto, description: 'EMAIL_ALREADY_VERIFIED: nothing to do' })
  requestEmailVerification(@Req() request: Request, @CurrentUser() user: SignedInUser): Promise<void> {
    return this.emailVerification.request(request, user);
  }

  @Post('verify-email/:token')
  @SignedIn()
  @HttpCode(HttpStatus.NO_CONTENT)
  @ApiOperation({
    summary: 'Verify an email through a mailed link (signed in as its account; mail on)',
    description:
      'The token is the last part of the mailed link. Needs the session of the account the link was mailed for, and X-CSRF-Token: ' +
      'verifying proves that whoever holds the account also reads its mail (a link opened without that session proves only the ' +
      'second). The link then stops working. Each use takes an attempt from the address’s sign-in budget; a link that works gives it back.',
  })
  @ApiNoContentResponse({ description: 'The email is verified', headers: NO_STORE })
  @ApiForbiddenResponse({
    type: ApiErrorDto,
    description: 'LINK_NOT_YOURS: the link was mailed for another account (it stays usable by that one); CSRF_TOKEN_INVALID',
  })
  @ApiNotFoundResponse({ type: ApiErrorDto, description: 'LINK_NOT_FOUND: no verification link has this token; MAIL_OFF: SMTP_URL is not set' })
  @ApiGoneResponse({ type: ApiErrorDto, description: 'LINK_USED: the link was used already, or has expired' })
  async verifyEmail(@Req() request: Request, @CurrentUser() user: SignedInUser, @Param('token') token: string): Promise<void> {
    await this.emailVerification.verify(request, user, token);
  }

  /** The cookie lasts as long as the session just issued may (SESSION_MAX_HOURS). */
  private setCookie(response: Response, session: IssuedSession): void {
    response.setHeader('Set-Cookie', sessionCookieHeader(session.token, this.config.sessions.maxMs / 1000, this.config.sessions.secureCookie));
  }
}
