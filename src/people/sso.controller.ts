import { Controller, Get, Inject, Query, Req, Res } from '@nestjs/common';
import { ApiFoundResponse, ApiOkResponse, ApiOperation, ApiProduces, ApiProperty, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { cookieValue, sessionCookieHeader } from '../auth/sessions/session-token';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { Mailer } from '../mail/mailer';
import { Public } from '../http/access';
import { setPageSecurityHeaders, STATIC_PAGE_CSP } from '../http/page-headers';
import { IgnoresUnknownQueryParameters } from '../http/query-parameters';
import { PENDING_LIFETIME_MS } from './oidc/oidc-pending';
import { SsoRefusal, SsoService, TAKEN_OVER_NOTICE } from './sso.service';

/** The cookie that carries a pending sign-in (sealed) from its start to the provider's callback. */
export const SSO_COOKIE = 'flagstore_sso';
const SSO_COOKIE_PATH = '/v1/auth/sso';

class SignInMethodsDto {
  @ApiProperty({ description: 'Email and password (POST /v1/auth/login): always' }) password: boolean;
  @ApiProperty({ description: 'Single sign-on through the studio’s OpenID Connect provider (GET /v1/auth/sso): when configured' }) sso: boolean;
  @ApiProperty({ description: 'A forgotten password is reset by a mailed link (POST /v1/auth/password-reset): when mail is on (SMTP_URL)' })
  passwordReset: boolean;
}

const PAGE = { 'text/html': { schema: { type: 'string' } } };
const LOCATION = { Location: { description: 'Where the browser goes next', schema: { type: 'string' } } };

/**
 * Single sign-on in the browser: GET /v1/auth/sso sends the person to the studio's OpenID Connect provider, which
 * sends them back to GET /v1/auth/sso/callback; they arrive signed in where they started (the console), or on a page
 * that says why not. Both answer pages and redirects, not JSON: a browser navigates them.
 */
@ApiTags('auth')
@Controller('auth')
export class SsoController {
  constructor(
    private readonly sso: SsoService,
    private readonly mailer: Mailer,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Get('methods')
  @Public()
  @ApiOperation({
    summary: 'How people may sign in here',
    description:
      'The console asks before showing its sign-in page: a password always, single sign-on when OIDC_ISSUER and its client are configured.',
  })
  @ApiOkResponse({ type: SignInMethodsDto, example: { password: true, sso: true, passwordReset: true } })
  methods(): SignInMethodsDto {
    return { password: true, sso: this.sso.enabled, passwordReset: this.mailer.enabled };
  }

  @Get('sso')
  @Public()
  @ApiOperation({
    summary: 'Sign in with single sign-on: redirects to the studio’s provider',
    description:
      'Starts the OpenID Connect authorization code flow (PKCE S256, state and nonce) and redirects the browser to the provider; the ' +
      'pending sign-in rides in an encrypted HttpOnly cookie for 10 minutes. `returnTo` (a path on this service, /console by default) ' +
      'is where the person lands once signed in. A page says why when single sign-on is off (404) or the provider cannot be reached (502).',
  })
  @ApiQuery({ name: 'returnTo', required: false, description: 'A path on this service, such as /console/flags; anything else means /console' })
  @ApiFoundResponse({ description: 'To the provider’s sign-in page', headers: LOCATION })
  @ApiProduces('text/html')
  @ApiResponse({ status: 404, description: 'Single sign-on is not configured', content: PAGE })
  @ApiResponse({ status: 502, description: 'The provider could not be reached or is misconfigured', content: PAGE })
  async start(@Query('returnTo') returnTo: unknown, @Res() response: Response): Promise<void> {
    setPageSecurityHeaders(response, STATIC_PAGE_CSP); // every page (and redirect) these routes answer
    try {
      const { url, pending } = await this.sso.start(typeof returnTo === 'string' ? returnTo : undefined);
      response.setHeader('Set-Cookie', this.ssoCookie(pending, PENDING_LIFETIME_MS / 1000));
      redirect(response, url);
    } catch (error) {
      this.page(response, error);
    }
  }

  @Get('sso/callback')
  @Public()
  // The provider adds what it likes (iss, session_state, scope): only code, state and error are read.
  @IgnoresUnknownQueryParameters()
  @ApiOperation({
    summary: 'Where the provider sends the browser back; signs the person in',
    description:
      'Completes the flow: checks the state against the pending sign-in, exchanges the code, validates the ID token. An identity ' +
      '(the provider’s iss and sub) signed in before signs into the same user whatever its email now. Otherwise the provider’s ' +
      'verified email signs in the verified user with that email and links the identity, takes over an unverified one (an account made ' +
      'through an invitation link: its password is removed and its sessions end; a page says so), or makes a user of a pending ' +
      'invitation; every sign-in accepts the pending invitations for the user’s email. The session cookie is set and the browser goes ' +
      'to returnTo. Anyone else, an unverified email, an account linked to another identity, a tampered state or an expired code get a ' +
      'page that says so.',
  })
  @ApiFoundResponse({ description: 'Signed in: to returnTo, with the session cookie set', headers: LOCATION })
  @ApiOkResponse({
    description: 'Signed in, and the sign-in took an unverified account over: a page says so, with the session cookie set and a link to returnTo',
    content: PAGE,
  })
  @ApiProduces('text/html')
  @ApiResponse({ status: 400, description: 'The sign-in expired, was tampered with, or was not started in this browser', content: PAGE })
  @ApiResponse({
    status: 403,
    description: 'No account and no invitation for this email, an unverified email, an account linked to another identity, or the provider refused',
    content: PAGE,
  })
  @ApiResponse({ status: 404, description: 'Single sign-on is not configured', content: PAGE })
  @ApiResponse({ status: 409, description: 'The account was being created by another sign-in at the same moment', content: PAGE })
  @ApiResponse({ status: 502, description: 'The provider could not be reached, or its answer could not be verified', content: PAGE })
  async callback(@Req() request: Request, @Res() response: Response): Promise<void> {
    setPageSecurityHeaders(response, STATIC_PAGE_CSP); // every page (and redirect) these routes answer
    const clearPending = this.ssoCookie('', 0);
    try {
      const { session, returnTo, takenOver } = await this.sso.finish(request.originalUrl, cookieValue(request.headers.cookie, SSO_COOKIE));
      const sessionCookie = sessionCookieHeader(session.token, this.config.sessions.maxMs / 1000, this.config.sessions.secureCookie);
      response.setHeader('Set-Cookie', [sessionCookie, clearPending]);
      if (takenOver) this.takenOverPage(response, returnTo);
      else redirect(response, returnTo);
    } catch (error) {
      response.setHeader('Set-Cookie', clearPending);
      this.page(response, error);
    }
  }

  private ssoCookie(value: string, maxAgeSeconds: number): string {
    const secure = this.config.sessions.secureCookie ? '; Secure' : '';
    return `${SSO_COOKIE}=${value}; Path=${SSO_COOKIE_PATH}; Max-Age=${maxAgeSeconds}; HttpOnly; SameSite=Lax${secure}`;
  }

  /** A refusal as a page a person can read, with the way back to sign-in. */
  private page(response: Response, error: unknown): void {
    if (!(error instanceof SsoRefusal)) throw error;
    response.status(error.status);
    response.setHeader('Content-Type', 'text/html; charset=utf-8');
    response.setHeader('Cache-Control', 'no-store');
    response.send(
      '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Sign-in failed · Flagstore</title></head>' +
        `<body><main><h1>You are not signed in</h1><p>${escapeHtml(error.message)}</p><p><a href="/console">Back to sign-in</a></p></main></body></html>`,
    );
  }

  /** Signed in, but the person must read what happened to the account before going on (a page, not a redirect). */
  private takenOverPage(response: Response, returnTo: string): void {
    response.status(200);
    response.setHeader('Content-Type', 'text/html; charset=utf-8');
    response.setHeader('Cache-Control', 'no-store');
    response.send(
      '<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Signed in · Flagstore</title></head>' +
        `<body><main><h1>You are signed in</h1><p role="alert">${escapeHtml(TAKEN_OVER_NOTICE)}</p>` +
        `<p><a href="${escapeHtml(returnTo)}">Continue</a></p></main></body></html>`,
    );
  }
}

/** A redirect without a body (Express's own writes one, which no client reads), never cached. */
function redirect(response: Response, location: string): void {
  response.status(302).setHeader('Location', location);
  response.setHeader('Cache-Control', 'no-store');
  response.end();
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);
}
