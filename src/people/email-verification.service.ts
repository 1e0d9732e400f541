import type { IncomingMessage } from 'node:http';
import { Inject, Injectable } from '@nestjs/common';
import { SignedInUser } from '../auth/principal';
import { SignInLimiter } from '../auth/sessions/sign-in-limiter';
import { CLOCK, Clock } from '../common/clock';
import { APP_CONFIG, AppConfig } from '../config/app-config';
import { Sql } from '../database/sql';
import { Transactions } from '../database/transactions';
import { InvalidationBus } from '../invalidation/invalidation-bus';
import { Mailer } from '../mail/mailer';
import { EMAIL_TOKEN, EmailTokensRepository, hashEmailToken, newEmailToken } from './email-tokens.repository';
import { MailLinksErrors } from './mail-links.errors';
import { redeemableToken } from './mail-links';
import { PeopleErrors } from './people.errors';
import { UsersRepository } from './users.repository';

/** How long an email verification link works. */
export const EMAIL_VERIFICATION_TTL_MS = 24 * 3_600_000;

/**
 * Email verification by mail (decisions.md, "Trust", Password reset and verification; Proof of an email): a signed-in
 * user asks for a link to their own email; whoever opens it (no session needed: the link proves it) verifies it.
 * Requests and bad links count against the client address's sign-in budget, as password reset's do.
 */
@Injectable()
export class EmailVerificationService {
  constructor(
    private readonly sql: Sql,
    private readonly transactions: Transactions,
    private readonly users: UsersRepository,
    private readonly tokens: EmailTokensRepository,
    private readonly limiter: SignInLimiter,
    private readonly mailer: Mailer,
    private readonly bus: InvalidationBus,
    @Inject(CLOCK) private readonly clock: Clock,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  /** Mails a verification link to the signed-in user's email; 409 when it is verified already. */
  async request(request: IncomingMessage, signedIn: SignedInUser): Promise<void> {
    if (!this.mailer.enabled) throw MailLinksErrors.mailOff('your email cannot be verified by mail here');
    const user = await this.users.find(this.sql, signedIn.userId);
    if (!user) throw PeopleErrors.userNotFound(signedIn.userId);
    if (user.emailVerified) throw MailLinksErrors.emailAlreadyVerified();
    await this.limiter.take(request, user.email);
    const { token, tokenHash } = newEmailToken();
    const now = this.clock.now();
    await this.transactions.run(async (tx) => {
      await this.tokens.create(tx, {
        tokenHash,
        purpose: 'verify-email',
        userId: user.id,
        email: user.email,
        createdAt: now,
        expiresAt: now + EMAIL_VERIFICATION_TTL_MS,
      });
      const url = `${this.config.urls.publicUrl}/console/verify-email/${token}`;
      await this.mailer.send(tx, {
        to: user.email,
        subject: 'Verify your email for Flagstore',
        text:
          `Hello ${user.name},\r\n\r\nto verify that ${user.email} is yours, open this link within 24 hours:\r\n\r\n${url}\r\n\r\n` +
          'The link works once. If you did not ask for it, ignore this mail.\r\n',
      });
    });
  }

  /**
   * Verifies the email the link was mailed to, for the signed-in user it was mailed for; the link then stops working.
   * The session is required: verifying proves that whoever holds the account (its password) also reads its mail.
   * Opened by the mailbox's owner alone, a link asked for by somebody else holding the account (an invitation link's
   * holder, issue "Trust") would otherwise verify that account for them, and single sign-on would no longer take it
   * over; that owner signs in by single sign-on or resets the password instead.
   */
  async verify(request: IncomingMessage, signedIn: SignedInUser, token: string): Promise<void> {
    if (!this.mailer.enabled) throw MailLinksErrors.mailOff('your email cannot be verified by mail here');
    // An attempt on the address's sign-in budget, taken before the work; a good link gives it back.
    const attempt = await this.limiter.take(request);
    if (!EMAIL_TOKEN.test(token)) throw MailLinksErrors.linkNotFound();
    const tokenHash = hashEmailToken(token);
    const userId = await this.transactions.run(async (tx) => {
      const locked = await this.tokens.lock(tx, 'verify-email', tokenHash);
      const problem = redeemableToken(locked, this.clock.now());
      if (problem) throw problem;
      // Before it is spent: the account it was mailed for can still use it.
      if (locked!.userId !== signedIn.userId) throw MailLinksErrors.linkNotYours();
      await this.tokens.markUsed(tx, tokenHash);
      const user = await this.users.lock(tx, locked!.userId);
      if (!user || user.email !== locked!.email) throw MailLinksErrors.linkNotFound();
      await this.users.markEmailVerified(tx, user.id);
      return user.id;
    });
    await attempt.giveBack();
    this.bus.publish('user', userId);
  }
}
